"""A saved index's vocabulary, looked up without building a dictionary when the index is opened.

A BM25 index keeps its terms in ``terms.txt`` (one a line; line ``i`` is term id ``i``). Turning that file into a
``{term: id}`` dict costs about 0.7 us a term on every opening (~50 M instructions for HPO's 68k terms, a tenth of
an offline question's start-up; seconds at millions of terms), while a question looks up a few dozen terms. So the
index also saves two arrays derived from the file: each term's byte offset in it, and the term ids in the byte order
of their UTF-8 text (which is the order of their code points). :class:`TermTable` finds a term by binary search over
the file's bytes (memory-mapped), with no per-term work at opening. A ``dict`` remains the test oracle.
"""

from __future__ import annotations

import io
import mmap
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from ark.arrays import I64, U8
from ark.storage.atomic import atomic_write_bytes
from ark.storage.cache_folder import rebuild_hint
from ark.storage.checksums import DamagedFileError

TERMS_FILE = "terms.txt"
OFFSETS_FILE = "term_offsets.npy"
ORDER_FILE = "term_order.npy"


def table_arrays(terms: Sequence[str]) -> tuple[I64, I64]:
    """``(offsets, order)`` of ``"\\n".join(terms)`` encoded as UTF-8: term ``i`` is the bytes
    ``offsets[i]:offsets[i + 1] - 1``, and ``order`` lists the ids by their term's bytes, ascending."""
    encoded = [term.encode("utf-8") for term in terms]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(e) + 1 for e in encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    order = np.asarray(sorted(range(len(encoded)), key=encoded.__getitem__), dtype=np.int64)
    return offsets, order


def save_table(directory: Path, terms: Sequence[str]) -> None:
    """Write the two arrays of ``terms`` (those of ``directory/terms.txt``) into ``directory``, each atomically."""
    for name, array in zip((OFFSETS_FILE, ORDER_FILE), table_arrays(terms), strict=True):
        buffer = io.BytesIO()
        np.save(buffer, array)
        atomic_write_bytes(directory / name, buffer.getvalue(), fsync=False)


class TermTable(Sequence[str]):
    """Term ids of a saved vocabulary: ``get(term)`` as a ``{term: id}`` dict answers it, and the terms by id."""

    def __init__(self, blob: bytes | mmap.mmap, offsets: I64, order: I64) -> None:
        self._blob = blob
        self._offsets = offsets
        self._order = order
        self._found: dict[str, int | None] = {}  # a question's terms repeat across its searches

    @classmethod
    def load(cls, directory: Path, num_terms: int, mmap_file: bool = True) -> TermTable | None:
        """The table saved in ``directory``, or None when its arrays are missing or do not fit ``num_terms``."""
        try:
            offsets = np.load(directory / OFFSETS_FILE, mmap_mode="r" if mmap_file and num_terms else None)
            order = np.load(directory / ORDER_FILE, mmap_mode="r" if mmap_file and num_terms else None)
        except (OSError, ValueError):
            return None
        if len(offsets) != num_terms + 1 or len(order) != num_terms:
            return None
        path = directory / TERMS_FILE
        size = path.stat().st_size
        if size != max(int(offsets[-1]) - 1, 0):  # a truncated or altered vocabulary would find the wrong terms
            raise DamagedFileError(path, f"{size:,} bytes, its term offsets say {max(int(offsets[-1]) - 1, 0):,}",
                                   rebuild_hint(directory))
        if not mmap_file or num_terms == 0:
            return cls(path.read_bytes(), offsets, order)
        with path.open("rb") as file:
            return cls(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ), offsets, order)

    def __len__(self) -> int:
        return len(self._order)

    def _bytes(self, term_id: int) -> bytes:
        return self._blob[int(self._offsets[term_id]): int(self._offsets[term_id + 1]) - 1]

    def __getitem__(self, term_id: int) -> str:  # type: ignore[override]
        if not -len(self) <= term_id < len(self):
            raise IndexError(f"term id {term_id} out of range ({len(self)} terms)")
        return self._bytes(term_id % len(self)).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(bytes(self._blob[: max(int(self._offsets[-1]) - 1, 0)]).decode("utf-8").split("\n")
                    if len(self) else [])

    def arrays(self) -> tuple[U8, I64, I64]:
        """(the file's bytes as uint8, the offsets, the order): what a compiled lookup searches (no copies)."""
        blob = np.frombuffer(self._blob, dtype=np.uint8) if len(self._blob) else np.zeros(0, np.uint8)
        return blob, np.asarray(self._offsets), np.asarray(self._order)

    def get(self, term: str | None, default: int | None = None) -> int | None:
        """The id of ``term``, or ``default`` when the vocabulary does not hold it."""
        if not isinstance(term, str):
            return default
        if term not in self._found:
            self._found[term] = self._search(term)
        found = self._found[term]
        return default if found is None else found

    def _search(self, term: str) -> int | None:
        try:
            key = term.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no saved term (written as UTF-8) can equal it
            return None
        lo, hi = 0, len(self._order)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._bytes(int(self._order[mid])) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self._order):
            term_id = int(self._order[lo])
            if self._bytes(term_id) == key:
                return term_id
        return None
