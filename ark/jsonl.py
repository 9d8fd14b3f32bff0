"""Repairing JSONL files that a killed writer left with a torn last line (shared by ``agent`` and ``eval``).

Writers append whole lines ending in ``\\n``; a crash mid-write leaves bytes after the last newline. Appending to
such a file would glue the next record onto the torn one, so appenders cut the tail off first.
"""

from __future__ import annotations

import os
from pathlib import Path


def complete_end(data: bytes) -> int:
    """Length of the complete-lines prefix of ``data`` (everything after the last newline is unfinished)."""
    return data.rfind(b"\n") + 1


def repair_torn_tail(path: str | Path) -> int:
    """Cut an unfinished last line (no trailing newline) off ``path``; returns the bytes removed (0 if none).

    A missing or empty file is left alone.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with path.open("r+b") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return 0
        handle.seek(0)
        end = complete_end(handle.read())
        handle.truncate(end)
        handle.flush()
        os.fsync(handle.fileno())
    return size - end
