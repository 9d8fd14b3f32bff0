"""The compiled vocabulary lookup of a query's terms on a large saved index (:meth:`BM25Index._query_terms`).

A saved vocabulary (:class:`~ark.index.terms.TermTable`) is found by binary search over the terms' bytes. In
Python each of the ~18 steps of a term's search slices the memory map and converts numpy integers (about 20 us a
term, most of a rare word's query on the synthetic MAG graph); compiled, one call looks up every term of a query
and counts them. Imported only when a large index is searched (numba costs start-up time); the compiled code is
cached on disk. The Python search (:meth:`TermTable.get`) is the test oracle.
"""

from __future__ import annotations

import numpy as np

from ark.index._prune_kernel import jit

SEPARATOR = 10  # "\n": the query's terms are joined by it (a term never holds one: the vocabulary is one a line)


@jit
def compare(blob, start, end, keys, key_start, key_end):
    """-1, 0 or 1 as the bytes ``blob[start:end]`` sort before, equal or after ``keys[key_start:key_end]``
    (unsigned bytes, a prefix first: Python's ``bytes`` order, the order the vocabulary was sorted in)."""
    n, m = end - start, key_end - key_start
    for i in range(min(n, m)):
        a, b = blob[start + i], keys[key_start + i]
        if a != b:
            return -1 if a < b else 1
    return -1 if n < m else (1 if n > m else 0)


@jit
def find(blob, offsets, order, keys, key_start, key_end):
    """The id of the term whose UTF-8 bytes are ``keys[key_start:key_end]``, or -1: binary search over ``order``
    (the term ids by their bytes; term ``i`` is ``blob[offsets[i]:offsets[i + 1] - 1]``)."""
    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        t = order[mid]
        if compare(blob, offsets[t], offsets[t + 1] - 1, keys, key_start, key_end) < 0:
            lo = mid + 1
        else:
            hi = mid
    if lo < len(order):
        t = order[lo]
        if compare(blob, offsets[t], offsets[t + 1] - 1, keys, key_start, key_end) == 0:
            return t
    return -1


@jit
def query_rows(blob, offsets, order, keys):
    """The (term id, occurrences) rows of the terms in ``keys`` (UTF-8 terms joined by :data:`SEPARATOR`) that the
    vocabulary holds, in order of first occurrence."""
    rows, n, start = np.empty((len(keys) // 2 + 1, 2), np.int64), 0, 0
    for end in range(len(keys) + 1):
        if end < len(keys) and keys[end] != SEPARATOR:
            continue
        t = find(blob, offsets, order, keys, start, end) if end > start else -1
        start = end + 1
        if t < 0:
            continue
        for i in range(n + 1):
            if i == n:
                rows[n, 0], rows[n, 1], n = t, 1, n + 1
            elif rows[i, 0] == t:
                rows[i, 1] += 1
                break
    return rows[:n].copy()
