"""Derived caches beside a graph (its text indexes, node embeddings, features): built once, never trusted when damaged.

A cache folder holds its files and a ``manifest.json`` naming what it was built from (``identity``: the graph's
fingerprint, the settings) and each file's size and checksum (:mod:`ark.storage.checksums`). :func:`open_cached`

- opens the folder when its manifest matches the identity and its files match their checksums, and raises
  :class:`~ark.storage.checksums.DamagedFileError` (naming the file and the command that rebuilds it) when a file
  does not, so a damaged cache never answers;
- otherwise builds under the folder's build lock (:func:`ark.storage.locks.build_lock`): processes starting together
  build it once, the others wait and open what was written;
- writes the files and the manifest in one atomic step (:func:`ark.storage.atomic.atomic_directory`);
- keeps the value it built in memory, with one warning, when the cache cannot be written (a read-only or full disk):
  nothing half-written stays behind, and the next run tries again;
- a build stopped by a full disk is one :class:`~ark.storage.full_disk.DiskFullError` naming the file being written
  and the space left, and its partial work (the scratch files that fill the disk) is removed; the partial work of a
  build stopped otherwise stays, for the next run to resume.

Folders written before checksums (a manifest without ``files``) still open; they gain checksums when rebuilt.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ark.errors import ArkError

from .atomic import atomic_directory
from .checksums import DamagedFileError, check_files, file_records
from .full_disk import full_disk_error, is_disk_full, newest_file
from .locks import build_lock

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
T = TypeVar("T")


def read_manifest(directory: Path) -> dict | None:
    """The folder's parsed manifest, or None when it is missing or unreadable."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def writable(directory: Path) -> bool:
    """Whether ``directory`` (or, if missing, its nearest existing parent) can be written to."""
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            return candidate.is_dir() and os.access(candidate, os.W_OK | os.X_OK)
    return False


def rebuild_hint(directory: Path) -> str:
    """The fix for a damaged cache folder: remove it, and the next use rebuilds it."""
    return f"rebuild it: rm -r {shlex.quote(str(directory))} (the next run builds it again)"


def valid_manifest(directory: Path, identity: dict[str, Any]) -> dict | None:
    """The manifest of ``directory`` when it was built from ``identity`` (None otherwise), after checking its files'
    checksums (:class:`~ark.storage.checksums.DamagedFileError` when one does not match)."""
    manifest = read_manifest(directory)
    if manifest is None or any(manifest.get(key) != value for key, value in identity.items()):
        return None
    check_files(directory, manifest.get("files") or {}, rebuild_hint(directory))
    return manifest


def publish(directory: Path, identity: dict[str, Any], write: Callable[[Path], None]) -> None:
    """Replace ``directory`` atomically with what ``write(folder)`` writes into a fresh folder, plus its manifest
    (``identity`` and every file's checksum). ``write`` may also remove the empty folder and save a directory at
    its path (an index's own atomic ``save``)."""
    with atomic_directory(directory) as tmp:
        write(tmp)
        manifest = {**identity, "files": file_records(tmp)}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


class StaleCache(ArkError):
    """Raised by an :func:`open_cached` loader for a folder that is intact but written in an older format: the
    folder is rebuilt and replaced (the loader says why)."""


def open_cached(directory: Path, identity: dict[str, Any], build: Callable[[Path | None], T],
                write: Callable[[T, Path], None], load: Callable[[Path], T], what: str = "cache",
                waiting: Callable[[str], None] | None = None) -> T:
    """The cached value at ``directory`` (see the module docstring): ``load(directory)`` when it is valid, else
    ``build(work_dir)`` (a folder for resumable partial work, removed afterwards; None when nothing can be written),
    saved by ``write(value, folder)`` and loaded back. A loader raising :class:`StaleCache` gets it rebuilt."""
    stale = False
    try:
        if valid_manifest(directory, identity) is not None:
            return load(directory)
    except StaleCache:
        stale = True  # intact, but in a format this version no longer reads: rebuild it
    if not writable(directory.parent):  # e.g. a graph installed read-only: build in memory, cache nothing
        return build(None)
    with build_lock(directory, waiting=waiting):
        if not stale and valid_manifest(directory, identity) is not None:  # built by another process meanwhile
            return load(directory)
        work_dir = directory.parent / f".{directory.name}.partial"
        value = _build_in(work_dir, build)
        try:
            publish(directory, identity, lambda folder: write(value, folder))
        except OSError as exc:
            shutil.rmtree(work_dir, ignore_errors=True)
            reason = exc.strerror or str(exc)
            if exc.filename is not None:
                reason = f"cannot write {exc.filename}: {reason}"
            if "free on that disk" not in reason:
                with contextlib.suppress(OSError):
                    reason += f"; {shutil.disk_usage(directory.parent).free / 1e6:,.1f} MB free there"
            log.warning("warning: could not save the %s to %s (%s); using it from memory, the next run tries again",
                        what, directory, reason)
            return value
        shutil.rmtree(work_dir, ignore_errors=True)
    return load(directory)


def _build_in(work_dir: Path, build: Callable[[Path | None], T]) -> T:
    """``build(work_dir)``. A full disk is a :class:`~ark.storage.full_disk.DiskFullError` naming the file being
    written (the newest file there), and ``work_dir`` is removed (its scratch files fill the disk); after any other
    failure (an interrupt, an endpoint that keeps failing) the partial work stays, so the next run resumes it."""
    try:
        return build(work_dir)
    except OSError as exc:
        failed = full_disk_error(exc, newest_file(work_dir) or work_dir)
        if not is_disk_full(failed):
            raise
        shutil.rmtree(work_dir, ignore_errors=True)
        if failed is exc:
            raise
        raise failed from exc


def verify_folder(directory: Path) -> int | None:
    """Hash every file of cache folder ``directory`` in full against its manifest: the number of files checked, or
    None when its manifest lists none (written before checksums). Raises
    :class:`~ark.storage.checksums.DamagedFileError`."""
    manifest = read_manifest(directory)
    if manifest is None:
        raise DamagedFileError(directory / MANIFEST, "missing or unreadable", rebuild_hint(directory))
    records = manifest.get("files")
    if not records:
        return None
    check_files(directory, records, rebuild_hint(directory), full=True)
    return len(records)
