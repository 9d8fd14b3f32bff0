"""Per-file checksums of a saved folder (a graph, an index): recorded when it is written, checked when it is opened.

A folder's manifest (``graph.json`` of a graph, ``manifest.json`` of an index) lists each file with its size and
BLAKE2b digest (:func:`file_records`). Opening checks every listed file (:func:`check_files`): one up to
:data:`FULL_HASH_LIMIT` bytes is hashed in full; a larger one is checked by its size and a digest of
:data:`SAMPLE_BLOCKS` blocks at fixed offsets spread over the file (:func:`sample_offsets`), so opening a
multi-gigabyte graph stays fast; ``full=True`` (``ark graph verify``) hashes everything. A file hashed in full is
stamped (``.checked.json``: its size, mtime, ctime and inode): later openings hash it again only when its stat
changed, so any write to it (which moves its ctime, a time no user can set back) is caught on the next opening, while
decay of the disk itself is left to ``ark graph verify``, which ignores the stamps. A file that is missing, has
the wrong size or the wrong digest raises :class:`DamagedFileError`, one line naming the file and how to rebuild it.

BLAKE2b from :mod:`hashlib` (no extra dependency): about 0.9 GB/s a core here, so the HPO graph and its BM25 index
(~30 MB) cost about 30 ms an opening (``benchmarks/cli_startup.py`` measures the whole start-up).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ark.errors import ArkError

ALGORITHM = "blake2b"
DIGEST_SIZE = 16
FULL_HASH_LIMIT = 64 * 1024 * 1024  # bytes; larger files are checked by size + sampled blocks when opened
SAMPLE_BLOCKS = 16
BLOCK_SIZE = 64 * 1024
_CHUNK = 1024 * 1024
# Stat stamps of files already hashed in full (size, mtime, ctime, inode and the recorded digest), so that opening a
# folder again hashes only what changed since; a stamp is kept only for files unchanged for RACY_S seconds.
STAMP_FILE = ".checked.json"
RACY_S = 2.0


class DamagedFileError(OSError, ArkError):
    """A saved file does not match its manifest (or cannot be read as what it should be); the message is one line
    naming the file, what is wrong and the command that rebuilds it."""

    def __init__(self, path: str | Path, problem: str, fix: str) -> None:
        super().__init__(f"{path} is damaged ({problem}); {fix}")
        self.path = Path(path)
        self.problem = problem
        self.fix = fix

    def __str__(self) -> str:
        return str(self.args[0])


def _new_hash() -> Any:
    return hashlib.blake2b(digest_size=DIGEST_SIZE)


def digest_file(path: str | Path) -> str:
    """Hex BLAKE2b digest of the whole file."""
    digest = _new_hash()
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def sample_offsets(size: int) -> list[int]:
    """Where the sampled blocks of a ``size``-byte file start: :data:`SAMPLE_BLOCKS` evenly spread offsets, the
    first at 0 and the last ending at the file's end."""
    last = max(size - BLOCK_SIZE, 0)
    if SAMPLE_BLOCKS <= 1:
        return [0]
    return sorted({round(i * last / (SAMPLE_BLOCKS - 1)) for i in range(SAMPLE_BLOCKS)})


def sample_digest(path: str | Path, size: int) -> str:
    """Hex digest of the file's size and its sampled blocks (:func:`sample_offsets`)."""
    digest = _new_hash()
    digest.update(str(size).encode())
    with open(path, "rb") as file:
        for offset in sample_offsets(size):
            file.seek(offset)
            digest.update(file.read(BLOCK_SIZE))
    return digest.hexdigest()


def file_record(path: str | Path) -> dict[str, Any]:
    """``{"size", "blake2b"}`` of one file, with ``"sample"`` (its sampled digest) when it is larger than
    :data:`FULL_HASH_LIMIT`."""
    size = Path(path).stat().st_size
    record: dict[str, Any] = {"size": size, ALGORITHM: digest_file(path)}
    if size > FULL_HASH_LIMIT:
        record["sample"] = sample_digest(path, size)
    return record


def file_records(directory: str | Path, names: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Records of ``names`` in ``directory`` (default: every visible regular file), keyed by file name."""
    directory = Path(directory)
    if names is None:
        names = sorted(p.name for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))
    return {name: file_record(directory / name) for name in names}


def check_files(directory: str | Path, records: Mapping[str, Mapping[str, Any]], fix: str,
                full: bool = False) -> None:
    """Raise :class:`DamagedFileError` for the first file of ``records`` in ``directory`` that is missing, has
    another size or another digest. Files up to :data:`FULL_HASH_LIMIT` bytes (every file with ``full``) are hashed
    in full; larger ones are compared by their sampled blocks (by size alone where no sample was recorded)."""
    directory = Path(directory)
    stamps = {} if full else _read_stamps(directory)
    checked: dict[str, list] = {}
    for name, record in records.items():
        path = directory / name
        key = _stat_key(path)
        if key is None:
            check_file(path, record, fix, full=full)
            continue
        stamp = [*key, record.get(ALGORITHM)]
        if stamps.get(name) == stamp and key[0] == record.get("size"):
            checked[name] = stamp  # hashed in full since it last changed
            continue
        check_file(path, record, fix, full=full)
        if (full or key[0] <= FULL_HASH_LIMIT) and _settled(key):
            checked[name] = stamp
    if checked and checked != {n: stamps.get(n) for n in checked}:
        _write_stamps(directory, {**stamps, **checked})


def _stat_key(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _settled(key: list[int]) -> bool:
    """Whether the file last changed more than :data:`RACY_S` ago: a later write then gets a later ctime (file
    times come from a coarse clock, so a write within the same few milliseconds could keep the recorded one)."""
    return key[2] < time.time_ns() - RACY_S * 1e9


def _read_stamps(directory: Path) -> dict[str, list]:
    try:
        stamps = json.loads((directory / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stamps if isinstance(stamps, dict) else {}


def _write_stamps(directory: Path, stamps: dict[str, list]) -> None:
    from .atomic import atomic_write_text

    with contextlib.suppress(OSError):  # a read-only folder: its files are hashed on every opening
        atomic_write_text(directory / STAMP_FILE, json.dumps(stamps), fsync=False)


def check_file(path: Path, record: Mapping[str, Any], fix: str, full: bool = False) -> None:
    """:func:`check_files` for one file."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise DamagedFileError(path, "missing", fix) from None
    if size != record.get("size"):
        raise DamagedFileError(path, f"{size:,} bytes, expected {record.get('size'):,}", fix)
    if full or size <= FULL_HASH_LIMIT:
        expected, found, what = record.get(ALGORITHM), digest_file(path), "checksum"
    elif "sample" in record:
        expected, found, what = record["sample"], sample_digest(path, size), "checksum of sampled blocks"
    else:
        return
    if expected is not None and found != expected:
        raise DamagedFileError(path, f"{what} mismatch", fix)
