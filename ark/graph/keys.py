"""Rows by a key computed from a node column, without a Python dict of every key: ~12 bytes a row.

A ``dict`` of GRBench Amazon's 9.4M node ids (or of its names, or of their word tuples) holds a Python string, an
int and a hash-table slot per node: 1-2 GB each at full size, and every per-graph lookup table of a run would be
another. :class:`KeyTable` keeps each key's 64-bit hash (Python's ``hash``: fixed within a process, which is all a
lookup table held in memory needs) in a sorted array beside its row, built a record batch at a time from the
memory-mapped column. :meth:`KeyTable.candidates` gives the rows whose key *hashes* like the one asked for, in
ascending row order; the caller checks each against the column itself (:meth:`KeyTable.rows`), so the answer is
exact, as a dict's would be, and a hash shared by two keys costs one more comparison, never a wrong row.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

Key = Hashable | None  # None: the row has no key (an empty name)
BATCH_ROWS = 65536
key_hash = hash  # a name of its own so that a test can force collisions


def column_slices(column: pa.ChunkedArray | pa.Array, rows: int | None = None) -> Iterator[tuple[int, pa.Array]]:
    """``(first row, slice)`` over a column, at most ``rows`` (:data:`BATCH_ROWS`) rows a slice (zero-copy)."""
    rows = rows or BATCH_ROWS
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    start = 0
    for chunk in chunks:
        for offset in range(0, len(chunk), rows):
            yield start + offset, chunk.slice(offset, rows)
        start += len(chunk)


def column_chunks(column: pa.ChunkedArray | pa.Array, rows: int | None = None) -> Iterator[tuple[int, list]]:
    """``(first row, values)`` of a column's rows, at most ``rows`` at a time, as Python values: one batch in
    memory at a time."""
    for start, values in column_slices(column, rows):
        yield start, values.to_pylist()


class KeyTable:
    """Sorted key hashes with their rows (ascending rows among equal hashes); see the module doc."""

    def __init__(self, hashes: npt.NDArray[np.int64], rows: npt.NDArray[np.int32 | np.int64]) -> None:
        self.hashes = hashes
        self.row_array = rows

    @classmethod
    def build(cls, chunks: Iterable[tuple[int, Sequence[Key]]]) -> KeyTable:
        """From ``(first row, keys)`` chunks in row order; a None key gives its row no entry."""
        hashes: list[npt.NDArray[np.int64]] = []
        rows: list[npt.NDArray[np.int64]] = []
        for start, keys in chunks:
            present = [k for k, key in enumerate(keys) if key is not None]
            if len(present) < len(keys):
                keys = [keys[k] for k in present]
            hashes.append(np.fromiter(map(key_hash, keys), dtype=np.int64, count=len(keys)))
            rows.append(np.asarray(present, dtype=np.int64) + start)
        all_hashes = np.concatenate(hashes) if hashes else np.zeros(0, np.int64)
        all_rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        del hashes, rows
        order = np.argsort(all_hashes, kind="stable")  # stable: rows stay ascending within a hash
        ordered = all_rows[order]  # int64
        sorted_rows = ordered.astype(np.int32) if len(all_rows) < 2**31 else ordered
        return cls(all_hashes[order], sorted_rows)

    def __len__(self) -> int:
        return len(self.hashes)

    def candidates(self, key: Key) -> npt.NDArray[np.int32 | np.int64]:
        """Rows whose key hashes as ``key``'s (ascending): the rows of ``key`` and, rarely, of another key."""
        wanted = key_hash(key)
        start = int(np.searchsorted(self.hashes, wanted, side="left"))
        if start == len(self.hashes) or int(self.hashes[start]) != wanted:
            return self.row_array[:0]
        end = int(np.searchsorted(self.hashes, wanted, side="right"))
        return self.row_array[start:end]

    def rows(self, key: Key, key_of: Callable[[int], Key]) -> list[int]:
        """The rows whose key is ``key`` exactly (``key_of(row)`` recomputes a row's key), ascending."""
        return [row for row in self.candidates(key).tolist() if key_of(row) == key]

    def shared_hash_rows(self) -> npt.NDArray[np.int32 | np.int64]:
        """Rows whose hash another row has too (equal keys or a collision), ascending: the rows a caller counting
        keys by hash must check exactly."""
        same = np.zeros(len(self.hashes), dtype=bool)
        equal = self.hashes[1:] == self.hashes[:-1]
        same[1:] |= equal
        same[:-1] |= equal
        return np.sort(self.row_array[same])
