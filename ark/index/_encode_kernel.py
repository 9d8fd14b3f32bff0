"""The compiled loop of :meth:`ark.index.postings.PostingsWriter.encode` (numba, optional: the ``fast`` extra).

numpy encodes a batch of postings in about twenty whole-array passes (deltas, per-term widths, a scatter per byte,
block reductions), each allocating its temporaries; this loop makes one pass over the postings and releases the GIL,
so the merge's batches encode on one core while another thread gathers the next. The bytes are the numpy path's
(the tests compare both); ``cache=True`` keeps the machine code on disk, so only the first build after an install
compiles.
"""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)


@jit
def encode_deltas(df, docs):
    """Per term its first document, delta width (1, 2 or 4 bytes) and byte offset, and the delta bytes."""
    n = len(df)
    first = np.zeros(n, np.int32)
    widths = np.ones(n, np.uint8)
    offsets = np.zeros(n, np.int64)
    at, size = 0, 0
    for t in range(n):
        largest = np.int64(0)
        for i in range(at + 1, at + df[t]):
            largest = max(largest, np.int64(docs[i]) - np.int64(docs[i - 1]))
        width = 1 if largest < 2**8 else (2 if largest < 2**16 else 4)
        widths[t] = width
        offsets[t] = size
        if df[t]:
            first[t] = docs[at]
        size += df[t] * width
        at += df[t]
    blob = np.zeros(size, np.uint8)
    at = 0
    for t in range(n):
        pos, nbytes = offsets[t], np.int64(widths[t])
        for i in range(at, at + df[t]):
            d = np.int64(docs[i]) - np.int64(docs[i - 1]) if i > at else np.int64(0)
            for byte in range(nbytes):
                blob[pos + byte] = (d >> (8 * byte)) & 0xFF
            pos += nbytes
        at += df[t]
    return first, widths, offsets, blob


@jit
def group_bounds(df, docs, tf, doc_lengths, block, skip):
    """Per group of ``block`` postings of each term its last document, largest frequency and shortest document,
    and per group of ``skip`` postings its last document (each term's last group shorter)."""
    n_blocks, n_skips = 0, 0
    for t in range(len(df)):
        n_blocks += (df[t] + block - 1) // block
        n_skips += (df[t] + skip - 1) // skip
    block_last = np.empty(n_blocks, np.int32)
    block_max_tf = np.empty(n_blocks, np.float32)
    block_min_dl = np.empty(n_blocks, np.int32)
    skip_last = np.empty(n_skips, np.int32)
    at, b, s = 0, 0, 0
    for t in range(len(df)):
        end = at + df[t]
        for g in range(at, end, block):
            stop = min(g + block, end)
            high, low = tf[g], doc_lengths[docs[g]]
            for i in range(g + 1, stop):
                high = max(high, tf[i])
                low = min(low, doc_lengths[docs[i]])
            block_last[b], block_max_tf[b], block_min_dl[b] = docs[stop - 1], high, low
            b += 1
        for g in range(at, end, skip):
            skip_last[s] = docs[min(g + skip, end) - 1]
            s += 1
        at = end
    return block_last, block_max_tf, block_min_dl, skip_last


@jit
def scatter_run(fill, local, ptr, run_docs, run_tf, docs, tf):
    """Copy one run's postings of a merge batch after the previous runs' ones: its ``j``-th term (batch-local id
    ``local[j]``) holds ``run_docs[ptr[j] - ptr[0]: ptr[j + 1] - ptr[0]]``, written from ``fill[local[j]]`` on."""
    p0 = ptr[0]
    for j in range(len(local)):
        t = local[j]
        at = fill[t]
        for i in range(ptr[j] - p0, ptr[j + 1] - p0):
            docs[at] = run_docs[i]
            for f in range(tf.shape[0]):
                tf[f, at] = run_tf[f, i]
            at += 1
        fill[t] = at
