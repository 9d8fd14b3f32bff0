"""A write that fails because the disk is full, said as such: the file being written and the space left.

The errors a full disk raises name neither: ``OSError(ENOSPC)`` from a buffered file's flush has no file name, and
numpy's ``ndarray.tofile`` reports a short write as ``"929814 requested and 438272 written"`` (no errno at all).
:func:`naming_full_disk` (around one file's writing) and :func:`full_disk_error` turn such an error into a
:class:`DiskFullError`: an ``OSError`` with ``errno.ENOSPC`` and the file's name whose message says the disk is full
and how much is free there (:func:`shutil.disk_usage`), so the CLI's one error line reads
``cannot write .../run00003.docs: No space left on device; 0.2 MB free on that disk (the disk is full)``.
Callers remove what they half-wrote (see :func:`ark.storage.cache_folder.open_cached`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ark.errors import ArkError

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_SHORT_WRITE = re.compile(r"^\d+ requested and \d+ written$")  # numpy's tofile, on a write that stopped short
_FULL_TEXTS = ("No space left on device", "Disk quota exceeded")  # pyarrow's IO errors carry no errno


class DiskFullError(OSError, ArkError):
    """A write stopped by a full disk (or quota): ``errno.ENOSPC``, ``filename`` the file being written, and a
    message saying so with the free space there."""

    def __str__(self) -> str:
        return f"cannot write {self.filename}: the disk is full ({self.strerror})"


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is a write stopped by a full disk: ENOSPC/EDQUOT, or a short write with no errno."""
    if not isinstance(exc, OSError):
        return False
    if exc.errno in FULL_ERRNOS or isinstance(exc, DiskFullError):
        return True
    text = str(exc.strerror or exc)
    return exc.errno is None and (_SHORT_WRITE.match(text.strip()) is not None or any(t in text for t in _FULL_TEXTS))


def free_space(path: str | Path) -> str:
    """``"; 0.2 MB free on that disk"`` for the nearest existing folder of ``path`` ('' when it cannot be told)."""
    folder = Path(path)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    with contextlib.suppress(OSError):
        return f"; {shutil.disk_usage(folder).free / 1e6:,.1f} MB free on that disk"
    return ""


def full_disk_error(exc: OSError, path: str | Path | None) -> OSError:
    """``exc`` as a :class:`DiskFullError` naming ``path`` (its own file name when it has one) when a full disk
    stopped it; any other error is returned as it is."""
    if isinstance(exc, DiskFullError) or not is_disk_full(exc):
        return exc
    where = exc.filename or path
    if where is None:
        return exc
    detail = "" if exc.errno in FULL_ERRNOS else f" ({exc.strerror or exc})"
    error = DiskFullError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)}{detail}{free_space(where)}", str(where))
    error.__cause__ = exc
    return error


@contextmanager
def naming_full_disk(path: str | Path) -> Iterator[None]:
    """Raise a :class:`DiskFullError` naming ``path`` when a full disk stops the block (which writes ``path``)."""
    try:
        yield
    except OSError as exc:
        error = full_disk_error(exc, path)
        if error is exc:
            raise
        raise error from exc


def newest_file(folder: str | Path) -> Path | None:
    """The most recently modified file under ``folder`` (the one being written when a write failed), or None."""
    newest: tuple[int, Path] | None = None
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            with contextlib.suppress(OSError):
                stamp = path.stat().st_mtime_ns
                if newest is None or stamp > newest[0]:
                    newest = (stamp, path)
    return None if newest is None else newest[1]
