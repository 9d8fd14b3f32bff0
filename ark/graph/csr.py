"""Reading many CSR rows at once.

Every stored entry of node ``i`` lies at positions ``indptr[i]:indptr[i + 1]`` of the graph's entry arrays
(``neighbor_array``, ``code_array``). A frontier of thousands of nodes is read in one vectorised gather: one
``graph.neighbors`` call per node costs microseconds of Python each.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..arrays import I64

if TYPE_CHECKING:
    from .store import KnowledgeGraph

BLOCK_ENTRIES = 1 << 22  # CSR entries (and at most as many rows) read at a time by entry_blocks: ~70 MB of arrays


def row_positions(indptr: npt.ArrayLike, rows: npt.ArrayLike) -> tuple[I64, I64]:
    """The positions of every entry of CSR rows ``rows`` in the entry arrays, concatenated in the order of ``rows``
    (a repeated row is read each time it appears), and each row's length.

    ``np.repeat(x, lengths)`` gives each position its row's ``x`` (the row itself, its index in ``rows``, ...);
    ``neighbor_array[positions]`` the targets, ``code_array[positions]`` the packed (relation, direction) codes.
    """
    rows = np.asarray(rows, dtype=np.int64)
    indptr = np.asarray(indptr)
    starts = indptr[rows].astype(np.int64, copy=False)
    lengths = indptr[rows + 1].astype(np.int64, copy=False) - starts
    # output slot j holding the k-th entry of row r (its entries start at slot o_r, the exclusive cumulative sum of
    # the lengths) reads position starts[r] + k = j + (starts[r] - o_r)
    shifts = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(len(shifts), dtype=np.int64) + shifts, lengths


def row_ranges(indptr: npt.ArrayLike, max_entries: int | None = None) -> Iterator[tuple[int, int]]:
    """Consecutive row ranges ``[start, end)`` covering every row in order, each of at most ``max_entries`` (default
    :data:`BLOCK_ENTRIES`) rows and entries (a row with more entries is a range of its own)."""
    max_entries = max_entries or BLOCK_ENTRIES
    indptr = np.asarray(indptr)
    num_rows, start = len(indptr) - 1, 0
    while start < num_rows:
        end = int(np.searchsorted(indptr, int(indptr[start]) + max_entries, side="right")) - 1
        end = min(max(end, start + 1), start + max_entries, num_rows)
        yield start, end
        start = end


def entry_blocks(graph: KnowledgeGraph, max_entries: int | None = None) -> Iterator[tuple[I64, I64, I64]]:
    """Every stored CSR entry of ``graph`` (a :class:`~ark.graph.KnowledgeGraph`) in row order, a block of rows at a
    time: ``(rows, neighbors, codes)``, int64 arrays, one element per entry. Memory is bounded by the block size,
    not by the graph's edges (:meth:`~ark.graph.KnowledgeGraph.edges` holds all of them: gigabytes at GRBench
    Amazon's size)."""
    indptr = np.asarray(graph.indptr)
    for start, end in row_ranges(indptr, max_entries):
        low, high = int(indptr[start]), int(indptr[end])
        lengths = np.diff(indptr[start:end + 1]).astype(np.int64, copy=False)
        rows = np.repeat(np.arange(start, end, dtype=np.int64), lengths)
        yield (rows, np.asarray(graph.neighbor_array[low:high], dtype=np.int64),
               np.asarray(graph.code_array[low:high], dtype=np.int64))
