"""The process that runs Cypher for :class:`ark.graphdb.isolated.IsolatedEngine`: one read-only ladybug database,
one query at a time, answered over pipes (the framing of :mod:`ark.graphdb.channel`).

Started as ``python -B -c <bootstrap> <sys.path as JSON>`` (see :func:`command`). Messages arrive on fd 0 and
leave on fd 1, moved to private descriptors first so that anything the engine prints cannot garble them. The first
message is the configuration (database, schema, limits, the parent's pid); the reply is ``ready`` or ``failed``.
Then each ``query`` gets ``rows`` or ``error`` (an error's ``kind`` and message, see :mod:`ark.graphdb.errors`).
The parent enforces the deadline: a query that runs past it, or crashes this process, costs only this process.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from typing import Any

BOOTSTRAP = "import sys, json; sys.path[:0] = json.loads(sys.argv[1]); from ark.graphdb.worker import main; main()"


def command() -> list[str]:
    """The command line of a worker that imports exactly what this process imports."""
    return [sys.executable, "-B", "-c", BOOTSTRAP, json.dumps([p for p in sys.path if p])]


def _limit_resources(address_space_mb: int | None) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash leaves no core file
    if address_space_mb:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        value = int(address_space_mb) * 2**20
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(resource.RLIMIT_AS, (value, hard))


def open_engine(config: dict[str, Any]) -> Any:
    """The in-process engine this worker serves, opened read-only from ``config``."""
    from .ladybug_engine import LadybugEngine
    from .schema import CypherSchema

    schema = CypherSchema.from_dict(config["schema"]) if config.get("schema") else None
    engine = LadybugEngine(config["path"], schema, timeout_s=float(config["timeout_s"]),
                           max_rows=int(config["max_rows"]), buffer_pool_mb=int(config["buffer_pool_mb"]),
                           max_db_size_mb=config.get("max_db_size_mb"), threads=int(config["threads"]))
    engine.query("RETURN 1")
    return engine


def answer(engine: Any, request: dict[str, Any]) -> dict[str, Any]:
    """The reply to one ``query`` request: its rows, or the error the engine raised."""
    from .errors import CypherError

    reply: dict[str, Any] = {"id": request.get("id")}
    try:
        result = engine.query(request["cypher"], request.get("params"), request.get("limit"),
                              timeout_s=request.get("timeout_s"))
    except CypherError as exc:
        return {**reply, "op": "error", "kind": exc.kind, "message": str(exc)}
    except MemoryError:
        return {**reply, "op": "error", "kind": "resources",
                "message": "the query ran out of memory; narrow it or aggregate inside the query"}
    except Exception as exc:  # an engine bug answers this query, never ends the worker
        return {**reply, "op": "error", "kind": "error", "message": f"{type(exc).__name__}: {str(exc)[:300]}"}
    return {**reply, "op": "rows", "columns": result.columns, "rows": result.rows, "truncated": result.truncated,
            "elapsed_s": result.elapsed_s, "node_indices": result.node_indices}


def send(wfd: int, reply: dict[str, Any]) -> None:
    """Write ``reply``; one too large to send (or to encode in memory) becomes an error reply."""
    from .channel import MAX_MESSAGE_BYTES, write_message

    try:
        write_message(wfd, reply)
    except (ValueError, MemoryError):
        write_message(wfd, {"id": reply.get("id"), "op": "error", "kind": "resources",
                            "message": f"the result is larger than {MAX_MESSAGE_BYTES >> 20} MB; return fewer rows "
                                       "or columns (aggregate, LIMIT, names instead of whole nodes)"})


def main() -> None:
    from .channel import ChannelClosed, die_with_parent, read_message, write_message

    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(2, 1)  # whatever the engine prints goes to stderr, never into the channel
    os.close(null)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    config = read_message(rfd)
    die_with_parent(int(config["parent_pid"]))
    try:
        _limit_resources(config.get("address_space_mb"))
        engine = open_engine(config)
    except BaseException as exc:  # say why, then leave
        write_message(wfd, {"op": "failed", "error": f"{type(exc).__name__}: {str(exc)[:500]}"})
        raise SystemExit(1) from None
    write_message(wfd, {"op": "ready", "pid": os.getpid()})
    while True:
        try:
            request = read_message(rfd)
        except ChannelClosed:
            return
        if request.get("op") == "exit":
            return
        if request.get("op") == "query":
            send(wfd, answer(engine, request))
