"""Reading many CSR rows at once.

Every stored entry of node ``i`` lies at positions ``indptr[i]:indptr[i + 1]`` of the graph's entry arrays
(``neighbor_array``, ``code_array``). A frontier of thousands of nodes is read in one vectorised gather: one
``graph.neighbors`` call per node costs microseconds of Python each.
"""

from __future__ import annotations

import numpy as np


def row_positions(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
