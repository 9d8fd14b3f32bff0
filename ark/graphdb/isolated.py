"""Cypher written by a model never runs in ARK's process: :class:`IsolatedEngine` runs each query in a worker
process (:mod:`ark.graphdb.worker`) over the read-only ladybug database, with the deadline enforced from outside.

The embedded engine checks its own timeout only between steps and can be crashed by a query its parser or binder
cannot take (a deep nesting, a long chain of operators): in ARK's process that was a segfault of ``ark ask`` or of
a whole ``ark serve``. Here a query that runs past ``timeout_s`` (plus :data:`GRACE_S`) gets its worker killed and
a :class:`~ark.graphdb.errors.CypherTimeout`; one that kills the worker gets a
:class:`~ark.graphdb.errors.CypherCrashed` naming the signal. Either way only that query is lost: the next one
starts a fresh worker. Workers stay warm between queries (opening the database costs a Python start and the
engine's start); at most ``workers`` run at a time, each one query at a time, started when first needed.

The read-only guard and the parameter checks run here first (a refused query never reaches a worker) and again
in the worker; the worker's address space is bounded (``memory_mb`` for the query on top of the engine's own
reservation), so a runaway query is bounded in memory as well as in time.

Every model-written query goes through here: the ``cypher`` baseline, the scout quizzer's runners and
``verify_records``; GraphScout's sandbox opens the database file in its own (sandboxed) process instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .channel import (
    SPAWNER,
    ChannelClosed,
    ChannelCorrupt,
    ChannelTimeout,
    kill_worker,
    read_message,
    signal_name,
    write_message,
)
from .engine import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, CypherResult, check_limit, check_timeout
from .errors import CypherCrashed, CypherTimeout, CypherUnavailable, error_from_kind
from .ladybug_engine import DB_HEADROOM_MB, check_query, database_reserve_mb
from .schema import CypherSchema

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

GRACE_S = 1.0  # how long past its time limit a query may take before its worker is killed
START_TIMEOUT_S = 60.0
DEFAULT_WORKERS = 2
DEFAULT_MEMORY_MB = 4096


class _Worker:
    """One worker process (started on demand) and its pipes."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.process: subprocess.Popen | None = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        from . import worker

        self.process = SPAWNER.popen(worker.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        try:
            write_message(self._fds()[0], {**self.config, "parent_pid": os.getpid()})
            ready = read_message(self._fds()[1], time.monotonic() + START_TIMEOUT_S)
        except (ChannelClosed, ChannelTimeout, ChannelCorrupt, OSError):
            ready = {"op": "failed", "error": f"the database worker did not start ({self.ended()})"}
        if ready.get("op") != "ready":
            self.kill()
            raise CypherUnavailable(f"cannot open the graph database {self.config['path']}: "
                                    f"{str(ready.get('error'))[:500]}")

    def _fds(self) -> tuple[int, int]:
        assert self.process is not None and self.process.stdin is not None and self.process.stdout is not None
        return self.process.stdin.fileno(), self.process.stdout.fileno()

    def ask(self, request: dict[str, Any], deadline: float) -> dict[str, Any]:
        stdin, stdout = self._fds()
        write_message(stdin, request)
        while True:
            reply = read_message(stdout, deadline)
            if reply.get("id") == request["id"]:
                return reply

    def ended(self) -> str:
        """How the process ended: ``signal SIGSEGV``, ``exit status 1`` or ``still running``."""
        if self.process is None:
            return "not started"
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2)
        code = self.process.returncode
        if code is None:
            return "still running"
        return f"signal {signal_name(-code)}" if code < 0 else f"exit status {code}"

    def kill(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            kill_worker(process)


class IsolatedEngine:
    """Read-only Cypher over the ladybug database file at ``path``, every query in a worker process (see the module
    docstring). The :class:`~ark.graphdb.engine.CypherEngine` interface; ``path`` and ``schema`` as
    :class:`~ark.graphdb.ladybug_engine.LadybugEngine` has them, so the code sandbox opens the same file itself."""

    dialect = "ladybug"

    def __init__(self, path: str | Path, schema: CypherSchema | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_rows: int = DEFAULT_MAX_ROWS, buffer_pool_mb: int = 256, threads: int = 1,
                 memory_mb: int = DEFAULT_MEMORY_MB, workers: int = DEFAULT_WORKERS,
                 cleanup_dir: Path | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise CypherUnavailable(f"no ladybug database at {self.path}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.schema = schema
        self.timeout_s = check_timeout(timeout_s, DEFAULT_TIMEOUT_S)
        self.max_rows = int(max_rows)
        reserve = database_reserve_mb(self.path)
        self._config = {"path": str(self.path), "schema": schema.to_dict() if schema is not None else None,
                        "timeout_s": self.timeout_s, "max_rows": self.max_rows, "buffer_pool_mb": int(buffer_pool_mb),
                        "threads": int(threads), "max_db_size_mb": reserve,
                        "address_space_mb": int(memory_mb) + reserve + int(buffer_pool_mb) + DB_HEADROOM_MB}
        self._size = workers
        self._idle: list[_Worker] = []
        self._made = 0
        self._ready = threading.Condition()
        self._closed = False
        self._cleanup_dir = cleanup_dir
        self._request_id = 0
        self.starts = 0  # worker processes started (a crash or a timeout costs one more)

    def __repr__(self) -> str:
        return f"IsolatedEngine({str(self.path)!r})"

    def query(self, cypher: str, params: Mapping[str, Any] | None = None, limit: int | None = None,
              timeout_s: float | None = None) -> CypherResult:
        started = time.monotonic()  # the deadline counts from here: the guard's own time is the query's
        values = check_query(cypher, params, self.dialect)
        limit = check_limit(limit)
        timeout = check_timeout(timeout_s, self.timeout_s)
        worker = self._acquire()
        try:
            if not worker.running:
                worker.kill()
                self.starts += 1
                before = time.monotonic()
                worker.start()
                started += time.monotonic() - before  # a worker's start is not the query's time
            with self._ready:
                self._request_id += 1
                request_id = self._request_id
            deadline = started + timeout
            request = {"op": "query", "id": request_id, "cypher": cypher, "params": values, "limit": limit,
                       "timeout_s": max(deadline - time.monotonic(), 0.05)}
            reply = self._ask(worker, request, timeout, deadline + GRACE_S)
        finally:
            self._release(worker)
        if reply.get("op") == "error":
            raise error_from_kind(str(reply.get("kind")), str(reply.get("message"))[:2000])
        rows = reply.get("rows")
        if reply.get("op") != "rows" or not isinstance(rows, list):
            raise CypherCrashed("the database worker sent an unreadable reply; it restarts for the next query")
        return CypherResult(list(reply.get("columns") or []), rows, bool(reply.get("truncated")),
                            float(reply.get("elapsed_s") or 0.0), list(reply.get("node_indices") or []))

    def warm(self) -> None:
        """Start one worker now if none is ready (e.g. while a model writes the query, so that the query's deadline
        is not spent waiting for a Python start); a failure to start is left for the query to report."""
        worker = self._acquire()
        try:
            if not worker.running:
                worker.kill()
                self.starts += 1
                with contextlib.suppress(CypherUnavailable):
                    worker.start()
        finally:
            self._release(worker)

    def _ask(self, worker: _Worker, request: dict[str, Any], timeout: float, deadline: float) -> dict[str, Any]:
        """The worker's reply; a worker past ``deadline`` or dead is killed and the query gets the error."""
        try:
            return worker.ask(request, deadline)
        except ChannelTimeout:
            worker.kill()
            raise CypherTimeout(f"the query ran past its {timeout:g} s deadline and was stopped; narrow it (start "
                                "from a node id, add LIMIT, avoid deep nesting, long chains of operators and "
                                "unbounded variable-length paths)") from None
        except (ChannelClosed, ChannelCorrupt, OSError):
            how = worker.ended()
            worker.kill()
            raise CypherCrashed(f"the query crashed the database engine ({how}); the engine restarts for the next "
                                "query. Write it more simply: less nesting, shorter chains of operators") from None

    def _acquire(self) -> _Worker:
        with self._ready:
            while True:
                if self._closed:
                    raise CypherUnavailable("the graph database is closed")
                if self._idle:
                    return self._idle.pop()
                if self._made < self._size:
                    self._made += 1
                    return _Worker(self._config)
                self._ready.wait()

    def _release(self, worker: _Worker) -> None:
        with self._ready:
            if self._closed:
                worker.kill()
            else:
                self._idle.append(worker)
            self._ready.notify()

    def close(self) -> None:
        """Stop every idle worker now (a busy one stops when its query ends) and remove a temporary database."""
        with self._ready:
            self._closed = True
            idle, self._idle = self._idle, []
            self._ready.notify_all()
        for worker in idle:
            worker.kill()
        if self._cleanup_dir is not None:
            shutil.rmtree(self._cleanup_dir, ignore_errors=True)
            self._cleanup_dir = None

    def __enter__(self) -> IsolatedEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            for worker in self._idle:
                worker.kill()


def open_isolated(graph: KnowledgeGraph, *, cache: bool = True, progress: bool = False,
                  **options: Any) -> IsolatedEngine:
    """Export ``graph`` to ladybug (cached, see :mod:`ark.graphdb.export`) and open it for out-of-process queries."""
    from .export import ladybug_database

    built = ladybug_database(graph, cache=cache, progress=progress)
    cleanup = built.path.parent if built.temporary else None
    return IsolatedEngine(built.path, built.schema, cleanup_dir=cleanup, **options)


def isolate(engine: Any) -> Any:
    """``engine`` for model-written queries: an in-process ladybug engine becomes an :class:`IsolatedEngine` over
    the same database file, schema and limits (the caller closes it; the file stays the engine's); any other engine
    (already isolated, or a Neo4j server, out of process by nature) is returned as it is."""
    from .ladybug_engine import LadybugEngine

    if isinstance(engine, LadybugEngine):
        return IsolatedEngine(engine.path, engine.schema, timeout_s=engine.timeout_s, max_rows=engine.max_rows)
    return engine
