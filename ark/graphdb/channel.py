"""A child process that answers JSON messages over pipes: the framing, the thread that starts children, and how a
child ended. Shared by the out-of-process Cypher engine (:mod:`ark.graphdb.isolated`) and the code sandbox.

Messages are JSON objects framed by a 4-byte big-endian length. Both sides use raw file descriptors (no buffering
to get out of step). The parent reads with a deadline, so a child that hangs or floods never blocks it past the
call's wall-clock limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import signal
import struct
import subprocess
import threading
import time
from concurrent.futures import Future
from typing import Any

from ark.errors import ArkError

MAX_MESSAGE_BYTES = 64 * 2**20
_HEADER = struct.Struct(">I")


class ChannelClosed(ArkError):
    """The other side closed its end (the child died, or the parent went away)."""


class ChannelTimeout(ArkError):
    """No complete message before the deadline."""


class ChannelCorrupt(ArkError):
    """The stream does not hold a valid message (bad length or JSON)."""


def encode(message: dict[str, Any]) -> bytes:
    data = json.dumps(message, ensure_ascii=False, default=str).encode("utf-8")
    if len(data) > MAX_MESSAGE_BYTES:
        raise ValueError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE_BYTES}")
    return _HEADER.pack(len(data)) + data


def write_message(fd: int, message: dict[str, Any]) -> None:
    view = memoryview(encode(message))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise ChannelTimeout()
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                raise ChannelTimeout()
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ChannelClosed()
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int, deadline: float | None = None, max_bytes: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """The next message of at most ``max_bytes``; ``deadline`` is a ``time.monotonic()`` instant (None: wait
    forever).

    A timeout after part of a message was read leaves the stream unusable: the caller must drop the child.
    """
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > max_bytes:
        raise ChannelCorrupt(f"message length {size} exceeds {max_bytes}")
    try:
        message = json.loads(_read_exact(fd, size, deadline).decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # any bytes the decoder refuses: bad UTF-8 or JSON, an integer too
        # long to convert, nesting past the recursion limit; each is the sender's fault, never the reader's crash
        raise ChannelCorrupt(f"malformed message: {str(exc)[:200]}") from None
    if not isinstance(message, dict):
        raise ChannelCorrupt("a message must be a JSON object")
    return message


class Spawner:
    """Starts child processes from one thread that lives as long as the program.

    ``PR_SET_PDEATHSIG`` (bubblewrap's ``--die-with-parent``, the Cypher worker's own) kills a child when the
    *thread* that started it exits, not the process: a child started from a short-lived thread
    (``asyncio.to_thread``, a thread pool that shrinks) would die with that thread. Every start therefore goes
    through this thread.
    """

    def __init__(self) -> None:
        self._requests: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, *args: Any, **kwargs: Any) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="ark-spawner", daemon=True)
                self._thread.start()
        future: Future = Future()
        self._requests.put((future, args, kwargs))
        return future.result()

    def _serve(self) -> None:
        while True:
            future, args, kwargs = self._requests.get()
            try:
                future.set_result(subprocess.Popen(*args, **kwargs))
            except BaseException as exc:  # handed to the caller, which reports it
                future.set_exception(exc)


SPAWNER = Spawner()


def kill_worker(process: subprocess.Popen) -> None:
    """End a worker started in its own process group (:class:`Spawner`): the whole group killed, the process reaped
    (10 s at most), its pipes closed. Both the code sandbox and the out-of-process Cypher engine stop workers so."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
    for stream in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):
            if stream is not None:
                stream.close()


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11; the number as text for one Python does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def die_with_parent(parent_pid: int) -> None:
    """In a child: be killed when the thread that started it ends (see :class:`Spawner`), and leave at once when
    the parent is already gone."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent_pid:
        os._exit(0)
