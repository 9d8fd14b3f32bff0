"""The interpreter process inside the sandbox: runs model-written Python, one call at a time, keeping variables.

Started by :class:`ark.sandbox.CodeSandbox` as ``python -I -B worker.py <folders holding ark and ladybug>``; the
messages of :mod:`ark.sandbox.protocol` arrive on fd 0 and leave on fd 1. Start-up, in this order:

1. read the configuration (limits, uid, database, temp folder);
2. open the graph database read-only when queries run here (``cypher: "local"``), while still able to read it;
3. drop to the unprivileged ``uid`` when started as root (process limits do not bind root), forbid gaining
   privileges again (``PR_SET_NO_NEW_PRIVS``), set the rlimits;
4. move the protocol to private descriptors and point fd 0 at /dev/null and fds 1/2 at a capture file, so output
   written below Python (``os.write(1, ...)``, child processes) is captured too.

Each call runs under a wall-clock alarm (``SIGALRM``) that raises in the code and keeps the variables; the parent
kills the worker if even that fails. After each call, leftover child processes are killed.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import ctypes
import io
import linecache
import os
import resource
import signal
import sys
import time
import traceback
from typing import Any

MAX_TRACEBACK_CHARS = 1500
# Standard modules model code often uses, imported before the worker drops privileges: without bubblewrap an
# unprivileged worker may be unable to read a Python installed under a private home folder.
PRELOAD = ("json", "re", "math", "statistics", "collections", "itertools", "functools", "operator", "string",
           "textwrap", "datetime", "heapq", "bisect", "random", "pprint", "csv", "dataclasses", "typing",
           "encodings.idna", "difflib", "fractions", "decimal")
OUTPUT_ABORT_FACTOR = 8  # printing this many times the kept output aborts the code


class CodeTimeout(BaseException):
    """The call's wall-clock alarm fired (a BaseException so ``except Exception`` in the code cannot swallow it)."""


class OutputLimit(BaseException):
    """The code printed far more than is kept."""


class CappedOutput(io.TextIOBase):
    """A text stream that keeps the first ``cap`` characters and aborts the code when flooded."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.total += len(text)
        if self.kept < self.cap:
            piece = text[: self.cap - self.kept]
            self.parts.append(piece)
            self.kept += len(piece)
        if self.total > self.cap * OUTPUT_ABORT_FACTOR:
            raise OutputLimit()
        return len(text)

    def take(self) -> tuple[str, bool]:
        text, truncated = "".join(self.parts), self.total > self.kept
        self.parts, self.kept, self.total = [], 0, 0
        return text, truncated


class Worker:
    def __init__(self, config: dict[str, Any], rfd: int, wfd: int) -> None:
        self.config = config
        self.limits = config["limits"]
        self.rfd, self.wfd = rfd, wfd
        self.pid = os.getpid()
        self.engine: Any = None
        self.calls: list[dict[str, Any]] = []
        self.request_id = 0
        self.runs = 0
        self.output = CappedOutput(int(self.limits["output_chars"]))
        self.capture_path = os.path.join(config["tmp"], ".output")
        self.namespace: dict[str, Any] = {}

    # ------------------------------------------------------------------ start-up
    def start(self) -> dict[str, Any]:
        from ark.graphdb.errors import CypherError

        self.cypher_error = CypherError
        database = self.config.get("db")
        if self.config.get("cypher") == "local" and database:
            from ark.graphdb.ladybug_engine import LadybugEngine
            from ark.graphdb.schema import CypherSchema

            schema = CypherSchema.from_dict(database["schema"]) if database.get("schema") else None
            self.engine = LadybugEngine(database["path"], schema, timeout_s=float(self.limits["cypher_timeout_s"]),
                                        max_rows=int(self.limits["cypher_max_rows"]),
                                        buffer_pool_mb=int(self.limits["db_buffer_mb"]),
                                        max_db_size_mb=int(database["max_db_size_mb"]), threads=1)
            self.engine.query("RETURN 1")  # touch the engine before privileges go
        for name in PRELOAD:  # imported while every file is readable (and ready for the first call)
            with contextlib.suppress(ImportError):
                __import__(name)
        # read while every file is: without bubblewrap an unprivileged worker may not reach a checkout (CI's lies
        # in a 0700 folder under /tmp); what cypher() imports is loaded before the snapshot too
        from ark.graphdb import engine as _engine  # noqa: F401
        from ark.sandbox.pristine import Snapshot, restore

        self._restore = restore
        self._drop_privileges()
        self._set_limits()
        self._redirect_output()
        self.namespace = self._fresh_namespace()
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes fail with EFBIG instead of killing us
        self.snapshot = Snapshot.take(self.config["tmp"], set(os.listdir(self.config["tmp"])),
                                      float(self.limits["cpu_s"]))
        return {"op": "ready", "pid": self.pid, "uid": os.getuid(), "cypher": self.config.get("cypher")}

    def _drop_privileges(self) -> None:
        uid = self.config.get("uid")
        if os.getuid() == 0 and uid is not None:
            os.chown(self.config["tmp"], uid, uid)  # the private temp folder is the one place it may write
            os.chmod(self.config["tmp"], 0o700)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            if os.getuid() == 0 or os.geteuid() == 0:
                raise RuntimeError("could not drop root privileges")
        # PR_SET_NO_NEW_PRIVS: setuid programs and file capabilities cannot raise privileges again.
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)

    def _set_limits(self) -> None:
        limits = self.limits
        address_space = int(self.config["address_space_mb"]) * 2**20
        settings = {
            resource.RLIMIT_AS: address_space,
            resource.RLIMIT_CPU: int(limits["cpu_s"]),
            resource.RLIMIT_NPROC: int(limits["max_processes"]),
            resource.RLIMIT_FSIZE: int(limits["file_size_mb"]) * 2**20,
            resource.RLIMIT_NOFILE: int(limits["max_open_files"]),
            resource.RLIMIT_CORE: 0,
        }
        for which, value in settings.items():
            _, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            # CPU: SIGXCPU at the soft limit names the cause; the hard limit (SIGKILL) follows if it is ignored.
            ceiling = value + 2 if which == resource.RLIMIT_CPU else value
            ceiling = ceiling if hard == resource.RLIM_INFINITY else min(ceiling, hard)
            resource.setrlimit(which, (value, ceiling))

    def _redirect_output(self) -> None:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        capture = os.open(self.capture_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        os.dup2(capture, 1)
        os.dup2(capture, 2)
        os.close(capture)
        sys.stdout = sys.stderr = self.output

    def _fresh_namespace(self) -> dict[str, Any]:
        return {"__name__": "__main__", "__builtins__": builtins, "cypher": self.cypher,
                "CypherError": self.cypher_error}

    # ------------------------------------------------------------------ cypher()
    def cypher(self, query: str, params: dict[str, Any] | None = None, limit: int | None = None) -> list[dict]:
        """Run one read-only Cypher query on the graph; returns a list of dicts (column -> value)."""
        from ark.graphdb.engine import check_limit, check_params, mentioned_strings
        from ark.graphdb.errors import CypherError, error_from_kind
        from ark.sandbox.protocol import MAX_CALL_RECORDS

        started = time.perf_counter()
        record: dict[str, Any] = {"query": str(query)[:500]}
        if len(self.calls) < MAX_CALL_RECORDS:  # the parent reads a bounded result frame
            self.calls.append(record)
        try:
            if not isinstance(query, str):
                raise error_from_kind("syntax", f"the query must be a string, got {type(query).__name__}")
            params = check_params(params)
            limit = check_limit(limit)
            if self.engine is not None:
                result = self.engine.query(query, params, limit)
                columns, rows, truncated, indices = result.columns, result.rows, result.truncated, result.node_indices
            elif self.config.get("cypher") == "callback":
                reply = self._ask_parent({"op": "cypher", "query": query, "params": params, "limit": limit})
                if reply.get("error"):
                    raise error_from_kind(reply["error"], reply.get("message", "query failed"))
                columns, rows = reply["columns"], reply["rows"]
                truncated, indices = bool(reply.get("truncated")), reply.get("node_indices", [])
            else:
                raise error_from_kind("unavailable", "no graph database is attached to this interpreter")
        except CypherError as exc:
            record.update(error=exc.kind, message=str(exc)[:300], ms=_ms(started))
            raise
        record.update(rows=len(rows), truncated=truncated, ms=_ms(started), node_indices=list(indices)[:1000],
                      strings=mentioned_strings(rows, params))
        return [dict(zip(columns, row, strict=True)) for row in rows]

    def _ask_parent(self, message: dict[str, Any]) -> dict[str, Any]:
        from ark.sandbox.protocol import read_message, write_message

        self.request_id += 1
        message["id"] = self.request_id
        # The alarm waits until the reply is read whole, so the stream never stops mid-message.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            write_message(self.wfd, message)
            while True:
                reply = read_message(self.rfd)
                if reply.get("op") == "cypher_reply" and reply.get("id") == self.request_id:
                    return reply
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})

    # ------------------------------------------------------------------ running code
    def run(self, code: str, timeout_s: float) -> dict[str, Any]:
        self.runs += 1
        self.calls = []
        filename = f"<code-{self.runs}>"
        started = time.perf_counter()
        error: str | None = None
        kind: str | None = None
        cypher_kind: str | None = None
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout_s)
            try:
                self._execute(code, filename)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except CodeTimeout:
            kind, error = "timeout", (f"the code ran past its {timeout_s:g} s time limit (variables are kept); "
                                      "do less per call or narrow the queries")
        except OutputLimit:
            kind, error = "output_limit", (f"the code printed more than {OUTPUT_ABORT_FACTOR * self.output.cap:,} "
                                           "characters and was stopped; print summaries or slices")
        except SyntaxError as exc:
            kind, error = "syntax", _syntax_message(exc)
        except MemoryError:
            kind, error = "memory", (f"the code ran out of memory (limit about {self.limits['memory_mb']} MB); "
                                     "process less data at once")
        except SystemExit as exc:
            if exc.code not in (None, 0):
                kind, error = "exception", f"SystemExit: {exc.code}"
        except BaseException as exc:  # the model's code may raise anything; all of it becomes an observation
            if isinstance(exc, self.cypher_error):
                kind, cypher_kind = "cypher", exc.kind
                error = f"{type(exc).__name__}: {exc}{_where(exc, filename)}"
            else:
                kind, error = "exception", _trimmed_traceback(exc, filename)
        finally:
            if os.getpid() != self.pid:  # a child forked by the code finished it: never answer as the worker
                os._exit(0)
        self._kill_leftovers()
        stdout, truncated = self.output.take()
        raw, raw_truncated = self._take_captured(max(0, int(self.limits["output_chars"]) - len(stdout)))
        return {"op": "result", "stdout": stdout + raw, "error": error, "error_kind": kind,
                "cypher_kind": cypher_kind, "elapsed_s": time.perf_counter() - started, "cypher_calls": self.calls,
                "output_truncated": truncated or raw_truncated}

    def _execute(self, code: str, filename: str) -> None:
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        tree = ast.parse(code, filename, "exec")
        last = None
        final = tree.body[-1] if tree.body else None
        if isinstance(final, ast.Expr):  # show the value of a final expression, as a REPL does
            tree.body.pop()
            last = ast.Expression(final.value)
        exec(compile(tree, filename, "exec"), self.namespace)
        if last is not None:
            value = eval(compile(last, filename, "eval"), self.namespace)
            if value is not None:
                print(repr(value))

    def _kill_leftovers(self) -> None:
        """Kill processes the code started: everything else in the sandbox's pid namespace, or (without one) our
        descendants."""
        if self.config.get("pid_namespace"):
            # every process we may signal in this namespace, except us and its init
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(-1, signal.SIGKILL)
        else:
            for pid in _descendants(self.pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 1.0  # reap what was killed (SIGKILL is delivered asynchronously)
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.002)

    def _take_captured(self, budget: int) -> tuple[str, bool]:
        """Output written to fds 1/2 directly during the call (at most ``budget`` characters); clears it."""
        try:
            size = os.fstat(1).st_size
        except OSError:
            return "", False
        if size == 0:
            return "", False
        with open(self.capture_path, "rb") as handle:
            data = handle.read(budget * 4 + 4)
        os.ftruncate(1, 0)
        text = data.decode("utf-8", "replace")[:budget]
        return text, size > len(text.encode("utf-8"))

    # ------------------------------------------------------------------ loop
    def serve(self) -> None:
        from ark.sandbox.protocol import ChannelClosed, read_message, write_message

        while True:
            try:
                request = read_message(self.rfd)
            except ChannelClosed:
                return
            op = request.get("op")
            if op == "run":
                reply = self.run(str(request.get("code", "")), float(request.get("timeout_s", 10.0)))
                reply["id"] = request.get("id")
                write_message(self.wfd, reply)
            elif op == "reset":
                write_message(self.wfd, {"op": "reset_done", "id": request.get("id"), "refused": self.reset()})
            elif op == "exit":
                write_message(self.wfd, {"op": "bye", "cpu_s": _cpu_s()})
                return
            # anything else (a late cypher reply after a timeout) is dropped


    def reset(self) -> str | None:
        """Back to the state the worker was ready in, for the next trajectory (:mod:`ark.sandbox.pristine`); the
        reason when it cannot be, and the parent then starts a fresh worker."""
        self._kill_leftovers()
        refused = self._restore(self.snapshot)
        if refused is None:
            self.namespace = self._fresh_namespace()
            self.runs, self.calls = 0, []
            self.output.take()
            with contextlib.suppress(OSError):
                os.ftruncate(1, 0)
            for name in [name for name in linecache.cache if name.startswith("<code-")]:
                del linecache.cache[name]
        return refused


def _cpu_s() -> float:
    """CPU seconds of this worker and the processes it reaped."""
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def _on_alarm(signum: int, frame: Any) -> None:
    raise CodeTimeout()


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def _syntax_message(exc: SyntaxError) -> str:
    line = (exc.text or "").rstrip("\n")
    caret = ""
    if line and exc.offset:
        caret = "\n    " + " " * (max(exc.offset, 1) - 1 - (len(line) - len(line.lstrip()))) + "^"
    where = f" (line {exc.lineno})" if exc.lineno else ""
    shown = f"\n    {line.strip()}{caret}" if line else ""
    return f"SyntaxError: {exc.msg}{where}{shown}"


def _where(exc: BaseException, filename: str) -> str:
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == filename]
    return f" (line {lines[-1]})" if lines else ""


def _trimmed_traceback(exc: BaseException, filename: str) -> str:
    """The traceback limited to the model's own code, ending with the exception line."""
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == filename]
    lines = ["Traceback (most recent call last):"] if frames else []
    for frame in frames[-5:]:
        lines.append(f"  line {frame.lineno}, in {frame.name}")
        if frame.line:
            lines.append(f"    {frame.line.strip()}")
    lines.extend(line.rstrip("\n") for line in traceback.format_exception_only(type(exc), exc))
    text = "\n".join(lines)
    return text if len(text) <= MAX_TRACEBACK_CHARS else "..." + text[-MAX_TRACEBACK_CHARS:]


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def main() -> None:
    sys.path[0:0] = [root for root in sys.argv[1:] if root not in sys.path]  # where ark and ladybug live
    from ark.sandbox.protocol import read_message, write_message

    rfd, wfd = os.dup(0), os.dup(1)  # private copies (not inherited by child processes)
    config = read_message(rfd)
    worker = Worker(config, rfd, wfd)
    try:
        ready = worker.start()
    except BaseException as exc:  # report why the sandbox could not start, then leave
        write_message(wfd, {"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        raise SystemExit(1) from None
    write_message(wfd, ready)
    worker.serve()


if __name__ == "__main__":
    main()
