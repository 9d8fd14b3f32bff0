"""Atomic file and directory writes: build the new content beside the target, then rename it into place.

A reader (or a run killed midway) sees either the old content or the new, never a torn mix:

- :func:`atomic_file` yields a handle on a temp file in the target's folder; on success the file is flushed,
  fsynced and ``os.replace``-d over the target; on error it is removed and the target is left alone.
  :func:`atomic_write_text` and :func:`atomic_write_bytes` are one-call shorthands.
- a full disk stopping either is a :class:`~ark.storage.full_disk.DiskFullError` naming the file being written
  (for a directory: its newest file) and the space left, raised once the temporary file or folder is removed.
- :func:`atomic_directory` yields a temp directory beside the target that replaces the target on success.
  On Linux the swap is a single ``renameat2(RENAME_EXCHANGE)``, so the target path never goes missing;
  elsewhere the old directory is moved aside just before the new one is renamed in (a gap of one rename).

Temp names start with ``.<target name>.`` so they sort beside the target and are hidden from listings. A temporary
directory's name carries the writing process's id (``.<name>.tmp-<pid>-<random>``): a process killed mid-save
leaves it behind, and the next save of the same target (or :func:`remove_stale_temporaries`) removes every one
whose process is gone, so a killed save is never left on disk for good.
Published files and directories get the permissions a plain ``open()`` / ``os.mkdir()`` would give them:
``0o666`` and ``0o777`` less the process umask (read once, at import), not the owner-only modes of
:func:`tempfile.mkstemp` and :func:`tempfile.mkdtemp`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .full_disk import full_disk_error, newest_file

FILE_MODES = ("w", "wb")


def _read_umask() -> int:
    """The process umask. Linux reports it in /proc without changing it; elsewhere it is set and put back."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()
FILE_PERMISSIONS = 0o666 & ~_UMASK
DIRECTORY_PERMISSIONS = 0o777 & ~_UMASK


@contextmanager
def atomic_file(
    path: str | Path, mode: str = "w", *, encoding: str = "utf-8", fsync: bool = True
) -> Iterator[IO[Any]]:
    """Yield a handle whose content replaces ``path`` when the block exits without error.

    ``mode`` is ``"w"`` (text, ``encoding``) or ``"wb"`` (bytes). Missing parent folders are created. With
    ``fsync`` the data reaches the disk before the rename, so a crash cannot leave an empty target behind.
    """
    if mode not in FILE_MODES:
        raise ValueError(f"unsupported mode {mode!r} for an atomic file; valid: {', '.join(FILE_MODES)}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as handle:
            os.chmod(tmp, FILE_PERMISSIONS)  # os.chmod, not os.fchmod: the latter is POSIX-only before 3.13
            yield handle
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        failed = full_disk_error(exc, path) if isinstance(exc, OSError) else exc
        if failed is not exc:
            raise failed from exc
        raise


def probe_writable(path: str | Path) -> None:
    """Raise :class:`OSError` naming the offending path unless a file could be written at ``path``.

    Nothing is changed: an existing file is opened for appending and closed; otherwise a temporary file is made and
    removed in the nearest existing folder above ``path`` (missing folders would be created there). Catches a
    read-only file system, a path below a file, a folder where a file is expected and paths in /proc or /sys
    before a long run, not at its end.
    """
    path = Path(path).absolute()
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if path.exists():
        try:
            with open(path, "ab"):
                return
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".ark-write-check.", dir=folder)
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(folder)) from None
    os.close(fd)
    os.unlink(tmp)


def atomic_write_text(path: str | Path, text: str, *, encoding: str = "utf-8", fsync: bool = True) -> Path:
    """Replace ``path`` with ``text`` atomically; returns ``path`` as a :class:`~pathlib.Path`."""
    with atomic_file(path, "w", encoding=encoding, fsync=fsync) as handle:
        handle.write(text)
    return Path(path)


def atomic_write_bytes(path: str | Path, data: bytes, *, fsync: bool = True) -> Path:
    """Replace ``path`` with ``data`` atomically; returns ``path`` as a :class:`~pathlib.Path`."""
    with atomic_file(path, "wb", fsync=fsync) as handle:
        handle.write(data)
    return Path(path)


@contextmanager
def atomic_directory(target: str | Path) -> Iterator[Path]:
    """Yield a fresh empty directory beside ``target`` that replaces ``target`` when the block succeeds.

    Whatever directory stands at the yielded path when the block ends is published (a caller may remove the
    empty one and rename a directory it prepared elsewhere in the same folder onto that path). On error the
    temporary directory is removed and ``target`` is left untouched. Missing parent folders are created.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent))
    try:
        tmp.chmod(DIRECTORY_PERMISSIONS)
        yield tmp
        _publish_directory(tmp, target)
    except BaseException as exc:
        # A full disk: the error names the file being written then (the newest in the folder), before it goes.
        failed = full_disk_error(exc, newest_file(tmp) or tmp) if isinstance(exc, OSError) else exc
        shutil.rmtree(tmp, ignore_errors=True)
        if failed is not exc:
            raise failed from exc
        raise


def remove_stale_temporaries(target: str | Path, legacy_age_s: float = 3600.0) -> list[Path]:
    """Remove the temporary directories of ``target`` (``.<name>.tmp-*``, ``.<name>.old-*``) left by processes that
    no longer run; returns what was removed. Names without a process id (written before ids were added) are removed
    once untouched for ``legacy_age_s`` seconds. Saves in progress, in this process or another, are left alone."""
    target = Path(target)
    removed: list[Path] = []
    try:
        siblings = list(target.parent.glob(f".{glob_escape(target.name)}.*-*"))
    except OSError:
        return removed
    for path in siblings:
        rest = path.name[len(target.name) + 2:]
        kind, _, tail = rest.partition("-")
        if kind not in ("tmp", "old") or not path.is_dir():
            continue
        pid_text = tail.split("-", 1)[0]
        if pid_text.isdigit() and "-" in tail:
            stale = not _process_alive(int(pid_text))
        else:
            try:
                stale = time.time() - path.stat().st_mtime > legacy_age_s
            except OSError:
                continue
        if stale:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def glob_escape(name: str) -> str:
    """``name`` with glob's special characters taken literally."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's), or cannot tell: keep its directory
    return True


def _publish_directory(new: Path, target: Path) -> None:
    """Put directory ``new`` at ``target``, removing the directory that was there (if any)."""
    if not target.exists():
        new.rename(target)
        return
    if _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the old content
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-{os.getpid()}-", dir=target.parent))
    target.rename(retired / target.name)
    try:
        new.rename(target)
    except BaseException:
        (retired / target.name).rename(target)  # put the old directory back
        shutil.rmtree(retired, ignore_errors=True)
        raise
    shutil.rmtree(retired, ignore_errors=True)


# The standard library has no atomic swap of two paths; Linux's renameat2 (glibc >= 2.28) does it in one call.
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV}


def _load_renameat2() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return None


_renameat2 = _load_renameat2()


def _exchange(a: Path, b: Path) -> bool:
    """Swap paths ``a`` and ``b`` in one atomic step; False where the platform or filesystem cannot."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))
