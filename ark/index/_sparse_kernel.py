"""Subset scoring driven by the query's postings (:func:`posting_scores`), for :mod:`ark.index.bm25_prune`, taken
when the query's terms hold few postings for the number of candidates (rare words: most questions about a graph's
names). The candidates go into a small hash table, then the terms' postings are streamed through it: no sort of the
candidates and no length read for a candidate no term holds, which were most of such a call (5,000 candidates on the
synthetic MAG graph: sorting them ~28 us, reading their lengths ~30 us, against ~1,600 postings for the median
query). Imported only when a large index is scored; compiled code cached on disk (``cache=True``)."""

from __future__ import annotations

import numpy as np

from ark.index._prune_kernel import DF, FIRST, P0, START, WIDTH, delta, jit, length_norm, weight_at

EMPTY = np.int64(-1)


@jit
def posting_scores(blob, tfs, doc_lengths, terms, idf, count, model, cands):
    """float32 scores of ``cands`` (any order, repeats allowed) over ``terms`` (query order), equal to
    :func:`ark.index._prune_kernel.subset_scores`'s: the candidates go into an open-addressing table at most half
    full, then each term's postings are decoded in turn and a posting whose document is a candidate has its weight
    added, in query order and in float32, to that candidate's sum (a length read only for those)."""
    size = 16
    while size < 2 * len(cands):
        size *= 2
    keys, sums = np.full(size, EMPTY), np.zeros(size, np.float32)
    slots = np.empty(len(cands), np.int64)
    for i in range(len(cands)):
        slots[i] = find(keys, size - 1, cands[i])
        keys[slots[i]] = cands[i]
    for t in range(len(terms)):
        start, width, p0, d = terms[t, START], terms[t, WIDTH], terms[t, P0], terms[t, FIRST]
        for p in range(terms[t, DF]):
            if p:
                d += delta(blob, start, width, p)
            slot = find(keys, size - 1, d)
            if keys[slot] == d:
                w = weight_at(tfs, p0 + p, length_norm(doc_lengths[d], model), idf[t], count[t])
                sums[slot] = np.float32(sums[slot] + w)
    out = np.empty(len(cands), np.float32)
    for i in range(len(cands)):
        out[i] = sums[slots[i]]
    return out


@jit
def find(keys, mask, d):
    """The slot of document ``d`` in ``keys`` (``mask + 1`` slots, a power of two): its own, or the empty one where
    it goes (multiplicative hashing: an odd factor permutes the low bits, so nearby ids spread; linear probing)."""
    slot = (d * np.int64(2654435761)) & mask
    while keys[slot] != EMPTY and keys[slot] != d:
        slot = (slot + 1) & mask
    return slot
