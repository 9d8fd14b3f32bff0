"""Messages between the parent and a sandbox worker: JSON objects framed by a 4-byte big-endian length, over pipes.

Both sides use raw file descriptors (no buffering to get out of step). The parent reads with a deadline, so a
worker that hangs or floods never blocks it past the call's wall-clock limit.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

MAX_MESSAGE_BYTES = 64 * 2**20
_HEADER = struct.Struct(">I")


class ChannelClosed(Exception):
    """The other side closed its end (the worker died, or the parent went away)."""


class ChannelTimeout(Exception):
    """No complete message before the deadline."""


class ChannelCorrupt(Exception):
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


def read_message(fd: int, deadline: float | None = None) -> dict[str, Any]:
    """The next message; ``deadline`` is a ``time.monotonic()`` instant (None: wait forever).

    A timeout after part of a message was read leaves the stream unusable: the caller must drop the worker.
    """
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > MAX_MESSAGE_BYTES:
        raise ChannelCorrupt(f"message length {size} exceeds {MAX_MESSAGE_BYTES}")
    try:
        message = json.loads(_read_exact(fd, size, deadline).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ChannelCorrupt(f"malformed message: {exc}") from None
    if not isinstance(message, dict):
        raise ChannelCorrupt("a message must be a JSON object")
    return message
