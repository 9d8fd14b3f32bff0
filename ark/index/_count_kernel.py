"""The compiled term-major count of one split chunk for :func:`ark.index.bm25_chunks._term_major_counts` (numba,
optional: the ``fast`` extra; without it scipy's CSR -> CSC conversion counts, with the same arrays).

A counting sort: one pass counts each term's tokens and each document's length, one scatters every kept token's
document into its term's slot (tokens come in document order, so each term's documents come out ascending), one
collapses a term's repeats of a document into a (document, frequency) pair in place. About 12 bytes a token at the
peak (the scatter and the frequencies), a third of the scipy path's, and the GIL is released.
"""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)


@jit
def term_major(term_ids, codes, doc_ids, num_docs, width):
    """(ptr, docs, tf, lengths) of a chunk whose token ``j`` is dictionary entry ``codes[j]`` of document
    ``doc_ids[j]`` (non-decreasing), ``term_ids[code]`` its term (-1: dropped), terms below ``width``."""
    ptr = np.zeros(width + 1, dtype=np.int64)
    lengths = np.zeros(num_docs, dtype=np.int32)
    for j in range(len(codes)):
        term = term_ids[codes[j]]
        if term >= 0:
            ptr[term + 1] += 1
            lengths[doc_ids[j]] += 1
    for t in range(width):
        ptr[t + 1] += ptr[t]
    fill = ptr[:-1].copy()
    docs = np.empty(ptr[width], dtype=np.int32)
    for j in range(len(codes)):
        term = term_ids[codes[j]]
        if term >= 0:
            docs[fill[term]] = doc_ids[j]
            fill[term] += 1
    tf = np.empty(len(docs), dtype=np.float32)
    pairs = 0
    for t in range(width):
        start, end = ptr[t], ptr[t + 1]
        ptr[t] = pairs
        i = start
        while i < end:
            k = i + 1
            while k < end and docs[k] == docs[i]:
                k += 1
            docs[pairs] = docs[i]
            tf[pairs] = k - i
            pairs += 1
            i = k
    ptr[width] = pairs
    return ptr, docs[:pairs], tf[:pairs], lengths
