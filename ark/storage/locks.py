"""One writer per output: an advisory lock that a second process is refused with a clear message; one builder per
cache entry: a lock that a second process waits for (:func:`build_lock`).

:func:`output_lock` holds an exclusive ``flock`` on a small lock file beside the output (``.<name>.lock``) while a
run writes it. A second process asking for the same lock gets :class:`OutputLocked` at once, naming the output and
the process that holds it, instead of appending a second copy of every line. The operating system drops the lock
when its holder exits, however it ends (a kill included), so a lock is never stale. The lock file is left in
place: removing it would let a third process lock a file nobody else can see.

Within one process the lock is re-entrant (a command may take it before the runner it calls takes it again).
Where ``fcntl`` is missing (Windows) no lock is taken.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from ark.errors import ArkError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class OutputLocked(RuntimeError, ArkError):
    """Another process is writing the same output."""


_held: dict[Path, int] = {}  # lock file -> nesting depth, in this process
_guard = threading.Lock()


def lock_path(output: str | Path, folder: bool = False) -> Path:
    """The lock file of ``output``: ``.<name>.lock`` beside a file, ``.lock`` inside a folder."""
    output = Path(output)
    return output / ".lock" if folder else output.with_name(f".{output.name}.lock")


@contextlib.contextmanager
def output_lock(output: str | Path, what: str = "output", folder: bool = False) -> Iterator[None]:
    """Hold the lock of ``output`` (a file, or with ``folder`` a run folder) for the block; :class:`OutputLocked`
    if another process holds it. Missing folders are created."""
    path = lock_path(output, folder).absolute()
    with _guard:
        depth = _held.get(path, 0)
        if depth:
            _held[path] = depth + 1
    if depth:
        try:
            yield
        finally:
            with _guard:
                _held[path] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the whole block
    try:
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise OutputLocked(f"{what} {output} is being written by {holder}; wait for it to finish, or "
                                   "choose another output") from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"process {os.getpid()}\n")
            handle.flush()
        with _guard:
            _held[path] = 1
        try:
            yield
        finally:
            with _guard:
                del _held[path]
    finally:
        handle.close()  # closing the descriptor releases the lock


_build_guards: dict[Path, threading.RLock] = {}  # folder -> this process's lock of it (threads wait on it)
_build_depth: dict[Path, int] = {}


@contextlib.contextmanager
def build_lock(target: str | Path, waiting: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the build lock of cache entry ``target`` for the block: an exclusive ``flock`` on the folder holding it.

    Unlike :func:`output_lock`, a second process waits for the first instead of being refused: the first-use build
    of a graph or an index is made once, and whoever waited re-reads what it wrote (callers check again inside the
    block). The lock is the folder itself, so no lock file is left behind; entries of one folder are built one at a
    time. Re-entrant within a thread (a build may open another cache of the same folder); other threads of the
    process wait. ``waiting`` is told once when another process holds it. Where the folder cannot be made (a
    read-only cache, where nothing can be built either) or ``fcntl`` is missing, no lock is taken.
    """
    folder = Path(target).absolute().parent
    with _guard:
        guard = _build_guards.setdefault(folder, threading.RLock())
    with guard:
        if _build_depth.get(folder, 0):
            _build_depth[folder] += 1
            try:
                yield
            finally:
                _build_depth[folder] -= 1
            return
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            fd = None
        try:
            if fd is not None and fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    if waiting is not None:
                        waiting(f"waiting for another process building {target} ...")
                    fcntl.flock(fd, fcntl.LOCK_EX)
            _build_depth[folder] = 1
            try:
                yield
            finally:
                _build_depth[folder] = 0
        finally:
            if fd is not None:
                os.close(fd)  # releases the lock
