"""A :class:`~ark.graphdb.engine.CypherEngine` over an embedded ladybug database (the maintained fork of Kùzu).

The database is opened read-only; each thread gets its own connection; every query gets a timeout
(``Connection.set_query_timeout``). The engine's own timeout is checked between batches of work, so a query that
spends long in one step (``UNWIND range(1, 10^9)``) can run well past it: code that runs queries written by a model
should run them where a wall clock can kill them: :mod:`ark.graphdb.isolated` (what :func:`ark.graphdb.open_cypher`
opens) and the code sandbox do; this in-process engine is for trusted queries and for those two workers.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .engine import (
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT_S,
    CypherResult,
    check_limit,
    check_params,
    check_timeout,
    node_indices,
    too_many_rows,
)
from .errors import (
    CypherError,
    CypherParameterError,
    CypherQueryError,
    CypherResourceError,
    CypherSyntaxError,
    CypherTimeout,
    CypherUnavailable,
    WriteRefused,
)
from .guard import check_read_only, parameter_names
from .schema import CypherSchema

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

MAX_MESSAGE_CHARS = 600
DB_HEADROOM_MB = 512  # address space for the engine's code and threads on top of its buffer pool and file map


def check_query(cypher: str, params: Mapping[str, Any] | None, dialect: str = "ladybug") -> dict[str, Any]:
    """The checked parameters of a statement the read-only guard accepts; every ``$parameter`` it uses must be
    given (ladybug would quietly read a missing one as null)."""
    check_read_only(cypher, dialect)
    values = check_params(params)
    missing = sorted(set(parameter_names(cypher)) - set(values))
    if missing:
        raise CypherParameterError(f"missing parameter(s) {', '.join('$' + m for m in missing)}: "
                                   f"pass params={{{', '.join(repr(m) + ': ...' for m in missing)}}}")
    return values


def database_reserve_mb(path: str | Path) -> int:
    """The address space (MB, a power of two) to let the engine reserve for the database file at ``path``: twice
    its size, at least 64 MB (``max_db_size_mb``, needed under an address-space rlimit)."""
    size = max(2 * Path(path).stat().st_size, 64 * 2**20)
    mb = max(1, -(-size // 2**20))
    return 1 << (mb - 1).bit_length()


class LadybugEngine:
    """Read-only Cypher over the ladybug database file at ``path``.

    ``buffer_pool_mb`` bounds the page cache; ``max_db_size_mb`` (a power of two, at least the file's size)
    bounds the address space the engine reserves (needed under an address-space rlimit; None: the engine's
    default); ``threads`` is the engine's worker-thread count.
    """

    dialect = "ladybug"

    def __init__(self, path: str | Path, schema: CypherSchema | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_rows: int = DEFAULT_MAX_ROWS, buffer_pool_mb: int = 256, max_db_size_mb: int | None = None,
                 threads: int = 1, cleanup_dir: Path | None = None) -> None:
        try:
            import ladybug
        except ImportError as exc:
            raise CypherUnavailable("the embedded graph database needs the 'graphdb' extra: "
                                    "pip install 'ark-kg[graphdb]'") from exc
        self.path = Path(path)
        if not self.path.is_file():
            raise CypherUnavailable(f"no ladybug database at {self.path}")
        self.schema = schema
        self.timeout_s = check_timeout(timeout_s, DEFAULT_TIMEOUT_S)
        self.max_rows = int(max_rows)
        self._cleanup_dir = cleanup_dir
        options: dict[str, Any] = {"read_only": True, "buffer_pool_size": int(buffer_pool_mb) * 2**20,
                                   "max_num_threads": int(threads)}
        if max_db_size_mb is not None:
            options["max_db_size"] = int(max_db_size_mb) * 2**20
        try:
            self._database = ladybug.Database(str(self.path), **options)
        except RuntimeError as exc:
            raise CypherUnavailable(f"cannot open the graph database {self.path}: {exc}") from exc
        self._ladybug = ladybug
        self._threads = int(threads)
        self._local = threading.local()
        self._connections: list[Any] = []
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"LadybugEngine({str(self.path)!r})"

    def _connection(self) -> Any:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            if self._closed:
                raise CypherUnavailable("the graph database is closed")
            connection = self._ladybug.Connection(self._database, num_threads=self._threads)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def _renew_connection(self, timeout: float) -> Any:
        """Close this thread's connection and open a fresh one (see :meth:`query`)."""
        old = getattr(self._local, "connection", None)
        self._local.connection = None
        if old is not None:
            with self._lock:
                self._connections = [c for c in self._connections if c is not old]
            with contextlib.suppress(RuntimeError):
                old.close()
        connection = self._connection()
        connection.set_query_timeout(max(1, int(timeout * 1000)))
        return connection

    def query(self, cypher: str, params: Mapping[str, Any] | None = None, limit: int | None = None,
              timeout_s: float | None = None) -> CypherResult:
        values = check_query(cypher, params, self.dialect)
        limit = check_limit(limit)
        timeout = check_timeout(timeout_s, self.timeout_s)
        connection = self._connection()
        connection.set_query_timeout(max(1, int(timeout * 1000)))
        started = time.perf_counter()
        try:
            try:
                result = connection.execute(cypher, values) if values else connection.execute(cypher)
            except RuntimeError as exc:
                if not (values and str(exc).startswith("Buffer manager exception")):
                    raise
                # ladybug keeps a prepared statement per distinct parameterised query on each connection, holding
                # buffer-pool memory until the connection closes, so a long-lived connection fills the pool after
                # a few dozen distinct queries. A fresh connection starts empty: retry there once.
                connection = self._renew_connection(timeout)
                result = connection.execute(cypher, values)
        except RuntimeError as exc:
            raise self._error(str(exc), timeout) from None
        try:
            if isinstance(result, list):  # cannot happen after the single-statement check; be safe
                raise CypherSyntaxError("one statement per query: remove the ';'-separated extra statements")
            columns = list(result.get_column_names())
            cap = limit if limit is not None else self.max_rows
            rows: list[list[Any]] = []
            while result.has_next() and len(rows) <= cap:
                rows.append([plain_value(v) for v in result.get_next()])
        except RuntimeError as exc:
            raise self._error(str(exc), timeout) from None
        finally:
            if not isinstance(result, list):
                result.close()
        truncated = len(rows) > cap
        if truncated and limit is None:
            raise too_many_rows(self.max_rows)
        rows = rows[:cap]
        return CypherResult(columns, rows, truncated, time.perf_counter() - started, node_indices(rows))

    def _error(self, message: str, timeout: float) -> CypherError:
        """A short, actionable error for a ladybug failure message."""
        kind, _, detail = message.partition(":")
        detail = detail.strip() if detail else message.strip()
        text = detail[:MAX_MESSAGE_CHARS]
        if message.strip().startswith("Interrupted"):
            return CypherTimeout(f"the query ran past its {timeout:g} s time limit; narrow it (start from a node id, "
                                 "add LIMIT, avoid unbounded variable-length paths and cartesian products)")
        if kind.startswith("Parser exception"):
            return CypherSyntaxError(f"Cypher syntax error: {text}")
        if "read-only" in message:
            return WriteRefused("the graph database is read-only (use MATCH ... RETURN)")
        if "bad_alloc" in message or kind.startswith("Buffer manager exception"):
            return CypherResourceError("the query ran out of memory; narrow it or aggregate inside the query")
        if re.match(r"Parameter \w+ not found", detail):
            return CypherParameterError(f"{text} (pass it in params={{...}})")
        hint = self._schema_hint(detail)
        return CypherQueryError(f"{text}{hint}")

    def _schema_hint(self, detail: str) -> str:
        if self.schema is None:
            return ""
        nodes, rels = self.schema.labels()
        if re.search(r"Table \S+ does not exist", detail):
            return f" Node tables: {', '.join(nodes)}. Relationship tables: {', '.join(rels)}."
        found = re.search(r"Cannot find property \S+ for", detail)
        if found:
            columns = sorted({name for spec in self.schema.nodes for name, _ in spec.columns})
            return f" Node properties: {', '.join(columns)}; relationships have no properties."
        return ""

    def close(self) -> None:
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for connection in connections:
            with contextlib.suppress(RuntimeError):
                connection.close()
        with contextlib.suppress(RuntimeError):
            self._database.close()
        if self._cleanup_dir is not None:
            shutil.rmtree(self._cleanup_dir, ignore_errors=True)

    def __enter__(self) -> LadybugEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def plain_value(value: Any) -> Any:
    """A ladybug value as plain JSON-like Python: nodes -> ``{"_label": ..., **properties}``, relationships ->
    ``{"_type": ...}``, paths -> ``{"nodes": [...], "rels": [...]}``; dates and other scalars as text."""
    if isinstance(value, dict):
        if "_NODES" in value and "_RELS" in value:
            return {"nodes": [plain_value(n) for n in value["_NODES"]],
                    "rels": [plain_value(r) for r in value["_RELS"]]}
        if "_LABEL" in value and "_SRC" in value:
            return {"_type": value["_LABEL"], **{k: plain_value(v) for k, v in value.items() if not k.startswith("_")}}
        if "_LABEL" in value:
            return {"_label": value["_LABEL"], **{k: plain_value(v) for k, v in value.items() if not k.startswith("_")}}
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def open_ladybug(graph: KnowledgeGraph, *, cache: bool = True, progress: bool = False, **options: Any) -> LadybugEngine:
    """Export ``graph`` to ladybug (cached, see :mod:`ark.graphdb.export`) and open it read-only."""
    from .export import ladybug_database

    built = ladybug_database(graph, cache=cache, progress=progress)
    cleanup = built.path.parent if built.temporary else None
    return LadybugEngine(built.path, built.schema, cleanup_dir=cleanup, **options)
