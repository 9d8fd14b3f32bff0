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
    return rows_of(blob, offsets, order, np.zeros(0, np.int32), keys)


@jit
def hashed_rows(blob, offsets, table, keys):
    """:func:`query_rows` with the terms found through :func:`hash_table`'s ``table`` (:func:`hashed_find`)."""
    return rows_of(blob, offsets, np.zeros(0, np.int64), table, keys)


@jit
def rows_of(blob, offsets, order, table, keys):
    """:func:`query_rows`, each term found through ``table`` when it has slots, else by binary search."""
    rows, n, start = np.empty((len(keys) // 2 + 1, 2), np.int64), 0, 0
    for end in range(len(keys) + 1):
        if end < len(keys) and keys[end] != SEPARATOR:
            continue
        t = -1
        if end > start:
            t = hashed_find(blob, offsets, table, keys, start, end) if len(table) else \
                find(blob, offsets, order, keys, start, end)
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


@jit
def key_hash(data, start, end):
    """FNV-1a (64 bits) of ``data[start:end]``, its high bits folded into the low ones (the slot's bits)."""
    h = np.uint64(14695981039346656037)
    for i in range(start, end):
        h = (h ^ np.uint64(data[i])) * np.uint64(1099511628211)
    return h ^ (h >> np.uint64(29))


@jit
def hash_table(blob, offsets, count):
    """An open-addressing table of the vocabulary's ``count`` terms (term ``i`` is ``blob[offsets[i]:offsets[i +
    1] - 1]``): each slot holds a term id + 1 (0: empty), at least half of the slots empty, linear probing."""
    size = 1
    while size < 2 * count:
        size *= 2
    table, mask = np.zeros(max(size, 1), np.int32), np.uint64(max(size, 1) - 1)
    for t in range(count):
        slot = key_hash(blob, offsets[t], offsets[t + 1] - 1) & mask
        while table[slot]:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = t + 1
    return table


@jit
def hashed_find(blob, offsets, table, keys, key_start, key_end):
    """:func:`find` through :func:`hash_table`'s ``table``: one probe, a few more on a collision, where the binary
    search reads three arrays at each of ~17 steps (all cache misses once another program ran in between)."""
    mask = np.uint64(len(table) - 1)
    slot = key_hash(keys, key_start, key_end) & mask
    while table[slot]:
        t = table[slot] - 1
        if compare(blob, offsets[t], offsets[t + 1] - 1, keys, key_start, key_end) == 0:
            return t
        slot = (slot + np.uint64(1)) & mask
    return -1
