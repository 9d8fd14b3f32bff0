"""`CodeSandbox`: one stateful, sandboxed Python worker per trajectory, with ``cypher()`` wired to a graph database.

Where ``cypher()`` runs. The embedded ladybug engine runs inside the sandbox ("local"): the worker opens the
database file itself, read-only, from a folder bound read-only, so nothing the code does can change it, and a
query that crashes the engine or runs away (ladybug checks its timeout only between steps; ``UNWIND range(1,
10^9)`` can run for minutes and take gigabytes) is bounded by the worker's memory limit and wall clock and costs
that call only, never the parent. The parent never runs a query for an embedded engine: a ``cypher`` frame from
such a worker is a protocol error. Only a server engine (Neo4j, which the network-less sandbox cannot reach) gets
the worker's queries over the pipe ("callback"): the parent checks the frame, and the server runs the query in a
read transaction under its own time limit, the driver streaming at most the row limit back.

Every frame from the worker is checked against its schema (:mod:`ark.sandbox.protocol`) and read with a size
limit; one that fails ends the worker with a ``protocol`` observation. A call never raises for what the code
does: every failure comes back in :class:`RunResult` as a short observation. A worker that dies or overruns its
wall clock is killed; the next call starts a fresh one and says so in ``RunResult.note``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ark.graphdb.channel import SPAWNER
from ark.graphdb.ladybug_engine import DB_HEADROOM_MB, database_reserve_mb

from .launcher import bwrap_command, clean_environment, isolation_mode, worker_command, worker_uid
from .limits import RunResult, SandboxLimits
from .protocol import (
    MAX_RESULT_BYTES,
    ChannelClosed,
    ChannelCorrupt,
    ChannelTimeout,
    FrameInvalid,
    check_cypher_frame,
    check_result_frame,
    read_message,
    write_message,
)
from .usage import SANDBOX_USAGE, exited, reap, tree_cpu_s

GRACE_S = 2.0  # how long past its own alarm a call may take before the worker is killed
START_TIMEOUT_S = 60.0
RESET_TIMEOUT_S = 5.0  # how long a worker may take to reset in place or to leave before it is killed
CYPHER_MODES = ("auto", "local", "callback")


class CodeSandbox:
    """A Python interpreter for model-written code; variables persist between :meth:`run` calls.

    ``engine``: the :class:`~ark.graphdb.CypherEngine` behind ``cypher()`` (None: no database). ``isolation``:
    ``auto`` (bubblewrap when it works, else the weaker rlimit-only mode with a warning), ``bwrap`` or ``rlimit``.
    ``cypher_mode``: ``auto`` (local for a ladybug engine, else callback), ``local`` or ``callback``.
    Use one sandbox per trajectory and :meth:`close` it (or use ``with``).
    """

    def __init__(self, engine: Any = None, limits: SandboxLimits | None = None, *, isolation: str = "auto",
                 cypher_mode: str = "auto", hide: list[Path] | None = None) -> None:
        if cypher_mode not in CYPHER_MODES:
            raise ValueError(f"unknown cypher_mode {cypher_mode!r}; valid: {', '.join(CYPHER_MODES)}")
        self.engine = engine
        self.limits = limits or SandboxLimits()
        self.mode = isolation_mode(isolation)
        local_ok = engine is not None and getattr(engine, "dialect", None) == "ladybug" and hasattr(engine, "path")
        if cypher_mode == "local" and not local_ok:
            raise ValueError("cypher_mode='local' needs a ladybug engine (LadybugEngine)")
        if cypher_mode == "callback" and getattr(engine, "dialect", None) == "ladybug":
            raise ValueError("an embedded ladybug engine runs inside the sandbox, never in this process: use "
                             "cypher_mode='local' or 'auto'")
        self.cypher_mode = ("local" if local_ok else "callback") if cypher_mode == "auto" else cypher_mode
        if engine is None:
            self.cypher_mode = "none"
        self.hide = list(hide or ())
        self.starts = 0
        self.resets = 0  # in place, without a new worker
        self.worker_cpu_s = 0.0  # CPU seconds of the ended workers' process trees (:mod:`ark.sandbox.usage`)
        self._reaped_cpu: float | None = None  # what wait4 counted for a worker reaped before _stop
        self._reported_cpu: float | None = None  # what the worker said as it left (when /proc cannot be read)
        self._tree_cpu: float = 0.0  # the worker tree's CPU read from /proc just before it was asked to leave
        self._process: subprocess.Popen | None = None
        self._tmp: str | None = None
        self._stderr: Any = None
        self._request_id = 0
        self._pending_note: str | None = None
        self._lock = threading.Lock()
        self.worker_info: dict[str, Any] = {}

    # ------------------------------------------------------------------ lifecycle
    @property
    def running(self) -> bool:
        return self._process is not None and not exited(self._process)  # not reaped: wait4 counts its CPU

    @property
    def worker_pid(self) -> int | None:
        """The pid (in the parent's namespace) of the sandbox's outermost process."""
        return self._process.pid if self._process is not None else None

    def _config(self) -> dict[str, Any]:
        limits = self.limits
        config: dict[str, Any] = {"limits": limits.to_dict(), "uid": worker_uid(), "cypher": self.cypher_mode,
                                  "pid_namespace": self.mode == "bwrap", "tmp": "/tmp" if self.mode == "bwrap"
                                  else self._tmp, "address_space_mb": limits.memory_mb}
        if self.cypher_mode == "local":
            path = Path(self.engine.path)
            reserve = database_reserve_mb(path)
            schema = self.engine.schema.to_dict() if getattr(self.engine, "schema", None) is not None else None
            config["db"] = {"path": str(path), "schema": schema, "max_db_size_mb": reserve}
            config["address_space_mb"] = limits.memory_mb + reserve + limits.db_buffer_mb + DB_HEADROOM_MB
        return config

    def _start(self) -> dict[str, Any]:
        self._tmp = tempfile.mkdtemp(prefix="ark-sandbox-")
        config = self._config()
        if config["uid"] is not None and self.mode == "rlimit":  # the unprivileged worker must own its temp folder
            os.chown(self._tmp, config["uid"], config["uid"])
        command = worker_command()
        if self.mode == "bwrap":
            read_only = [Path(config["db"]["path"]).parent] if "db" in config else []
            command = bwrap_command(self.limits.tmp_size_mb, hide=self.hide, read_only=read_only) + command
        home = "/tmp" if self.mode == "bwrap" else self._tmp
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - kept open for the worker's life, closed in _stop
        self._process = SPAWNER.popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                       env=clean_environment(home), cwd=self._tmp, start_new_session=True,
                                       close_fds=True)
        self.starts += 1
        SANDBOX_USAGE.add("workers_started")
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            stdin, stdout = _pipes(self._process)
            write_message(stdin, config)
            ready = read_message(stdout, deadline, MAX_RESULT_BYTES)
        except (ChannelClosed, ChannelTimeout, ChannelCorrupt, OSError):
            ready = {"op": "failed", "error": "the worker did not start"}
        if ready.get("op") != "ready":
            detail = str(ready.get("error") or "")[:500]
            tail = self._stderr_tail()
            self._stop()
            raise RuntimeError(f"the code sandbox could not start: {detail} {tail}".strip())
        self.worker_info = {key: ready.get(key) for key in ("pid", "uid", "cypher")}  # nothing else is kept
        return self.worker_info

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.seek(0)
            return self._stderr.read()[-800:].decode("utf-8", "replace").strip()
        return ""

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            self._end(process)
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()
            self._stderr = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _end(self, process: subprocess.Popen) -> None:
        """Kill what is left of the worker's process group, reap it and count its tree's CPU time."""
        killed = not exited(process)
        before = tree_cpu_s(process.pid) if killed else self._tree_cpu
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # not reaped yet: the pid is still this worker's
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
        counted = reap(process, 10.0)
        if counted is None:
            counted = self._reaped_cpu or 0.0
        cpu = max(before, counted) or (self._reported_cpu or 0.0)
        self._reaped_cpu = self._reported_cpu = None
        self._tree_cpu = 0.0
        self.worker_cpu_s += cpu
        SANDBOX_USAGE.add("workers_killed" if killed else "workers_ended", cpu_s=cpu)
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def reset(self) -> None:
        """Forget everything (variables, files, processes, modules the code made): the worker is put back into the
        state it was ready in (:mod:`ark.sandbox.pristine`, a few milliseconds) or, when it declines or does not
        answer, stopped, and the next call starts a fresh one."""
        with self._lock:
            self._pending_note = None
            if self.running and self._reset_in_place():
                self.resets += 1
                SANDBOX_USAGE.add("resets_in_place")
                return
            self._stop()

    def _reset_in_place(self) -> bool:
        assert self._process is not None
        self._request_id += 1
        try:
            stdin, stdout = _pipes(self._process)
            write_message(stdin, {"op": "reset", "id": self._request_id})
            reply = read_message(stdout, time.monotonic() + RESET_TIMEOUT_S, MAX_RESULT_BYTES)
        except (ChannelClosed, ChannelTimeout, ChannelCorrupt, OSError):
            return False
        return reply.get("op") == "reset_done" and reply.get("id") == self._request_id and reply.get("refused") is None

    def close(self) -> None:
        """Stop the worker: asked to leave first, then reaped, its tree's CPU time counted (:attr:`worker_cpu_s`,
        :data:`~ark.sandbox.usage.SANDBOX_USAGE`); the process is gone when this returns (killed, with its process
        group, when it does not leave)."""
        with self._lock:
            if self.running:
                self._say_goodbye()
            self._stop()

    def _say_goodbye(self) -> None:
        assert self._process is not None
        self._tree_cpu = tree_cpu_s(self._process.pid)  # the tree is whole now: it ends as it leaves
        try:
            stdin, stdout = _pipes(self._process)
            write_message(stdin, {"op": "exit"})
            reply = read_message(stdout, time.monotonic() + RESET_TIMEOUT_S, MAX_RESULT_BYTES)
            cpu = reply.get("cpu_s") if reply.get("op") == "bye" else None
            if isinstance(cpu, int | float) and 0 <= cpu < 1e7:
                self._reported_cpu = float(cpu)
            deadline = time.monotonic() + RESET_TIMEOUT_S
            while not exited(self._process) and time.monotonic() < deadline:  # _end reaps it and counts its CPU
                time.sleep(0.002)
        except (ChannelClosed, ChannelTimeout, ChannelCorrupt, OSError):
            pass

    def __enter__(self) -> CodeSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stop()

    # ------------------------------------------------------------------ calls
    def start(self) -> None:
        """Start the worker now (otherwise the first :meth:`run` does)."""
        with self._lock:
            if not self.running:
                self._start()

    def run(self, code: str, timeout_s: float | None = None) -> RunResult:
        """Run ``code`` in the worker; never raises for anything the code does."""
        timeout = float(timeout_s if timeout_s is not None else self.limits.timeout_s)
        if not isinstance(code, str):
            return RunResult(error=f"code must be a string, got {type(code).__name__}", error_kind="syntax")
        with self._lock:
            note = self._pending_note
            self._pending_note = None
            if not self.running:
                if self._process is not None:  # it died between calls
                    note = note or "the interpreter had stopped; it was restarted and earlier variables are gone"
                self._stop()
                try:
                    self._start()
                except (RuntimeError, OSError) as exc:
                    return RunResult(error=str(exc), error_kind="sandbox", note=note)
            result = self._call(code, timeout)
            result.restarted = note is not None
            if note:
                result.note = f"{note}. {result.note}" if result.note else note
            return result

    def _call(self, code: str, timeout: float) -> RunResult:
        assert self._process is not None
        self._request_id += 1
        request_id = self._request_id
        started = time.monotonic()
        deadline = started + timeout + GRACE_S
        stdin, stdout = _pipes(self._process)
        try:
            write_message(stdin, {"op": "run", "id": request_id, "code": code, "timeout_s": timeout})
            while True:
                message = read_message(stdout, deadline, MAX_RESULT_BYTES)
                if message.get("op") == "cypher" and self.cypher_mode == "callback":
                    self._serve_cypher(check_cypher_frame(message), stdin, deadline)
                    continue
                fields = check_result_frame(message, request_id, self.limits.output_chars)
                return _result(fields, self.limits.output_chars)
        except ChannelTimeout:
            self._stop()
            self._pending_note = "the interpreter was restarted after a timeout; variables from earlier calls are gone"
            return RunResult(error=f"the code ran past its {timeout:g} s time limit and the interpreter was stopped",
                             error_kind="timeout", elapsed_s=time.monotonic() - started)
        except FrameInvalid as exc:  # the code forged a frame: drop this worker, keep the parent
            self._stop()
            self._pending_note = "the interpreter was restarted after it broke the protocol; variables are gone"
            return RunResult(error=f"the interpreter sent a malformed message ({exc}) and was stopped; the code "
                                   "must not write to the interpreter's own channel", error_kind="protocol",
                             elapsed_s=time.monotonic() - started)
        except (ChannelClosed, ChannelCorrupt, OSError):
            status = self._exit_description()
            self._stop()
            self._pending_note = "the interpreter was restarted after it stopped; variables from earlier calls are gone"
            return RunResult(error=f"the interpreter process stopped ({status}); it restarts on the next call",
                             error_kind="crashed", elapsed_s=time.monotonic() - started)

    def _exit_description(self) -> str:
        process = self._process
        if process is None:
            return "not running"
        if process.returncode is None:
            self._reaped_cpu = reap(process, 2.0)
        code = process.returncode
        if code is None:
            return "it broke the protocol"
        if self.mode == "bwrap" and 128 < code < 128 + 65:  # bwrap reports a child killed by signal N as 128 + N
            code = 128 - code
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            hints = {"SIGXCPU": ": CPU time budget used up", "SIGKILL": ": killed at a memory or CPU limit"}
            hint = hints.get(name, "")
            return f"signal {name}{hint}"
        return f"exit status {code}"

    def _serve_cypher(self, frame: tuple[int, str, Any, Any], stdin: int, deadline: float) -> None:
        """Run a query the worker sent (callback mode: a database server the sandbox cannot reach, which runs it in
        a read transaction under its own time limit) and send back rows or the error."""
        from ark.graphdb.errors import CypherError, CypherTimeout

        frame_id, query, params, limit = frame
        reply: dict[str, Any] = {"op": "cypher_reply", "id": frame_id}
        remaining = deadline - GRACE_S - time.monotonic()
        try:
            if remaining <= 0.05:
                raise CypherTimeout("no time left in this call for another query")
            timeout = min(self.limits.cypher_timeout_s, remaining)
            result = self.engine.query(query, params, limit, timeout_s=timeout)
            reply.update(columns=result.columns, rows=result.rows, truncated=result.truncated,
                         node_indices=result.node_indices[:1000])
        except CypherError as exc:
            reply.update(error=exc.kind, message=str(exc))
        except Exception as exc:  # an engine bug must not take the agent down
            reply.update(error="error", message=f"{type(exc).__name__}: {str(exc)[:300]}")
        write_message(stdin, reply)


def _pipes(process: subprocess.Popen) -> tuple[int, int]:
    """The descriptors of the worker's stdin and stdout (it is always started with both piped)."""
    if process.stdin is None or process.stdout is None:
        raise OSError("the sandbox worker has no stdin/stdout pipe")
    return process.stdin.fileno(), process.stdout.fileno()


def _result(fields: dict[str, Any], output_chars: int) -> RunResult:
    """The :class:`RunResult` of a checked result frame (see :func:`~ark.sandbox.protocol.check_result_frame`)."""
    stdout = fields["stdout"]
    truncated = fields["output_truncated"] or len(stdout) > output_chars
    return RunResult(stdout=stdout[:output_chars], error=fields["error"], error_kind=fields["error_kind"],
                     cypher_kind=fields["cypher_kind"], elapsed_s=fields["elapsed_s"],
                     cypher_calls=fields["cypher_calls"], output_truncated=truncated)
