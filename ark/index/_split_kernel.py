"""The compiled split of all-ASCII texts for :meth:`ark.index.tokenizer.Tokenizer.split` (numba, optional: the
``fast`` extra; without it Arrow's kernels split, with the same tokens).

Arrow's path makes several whole-buffer passes (a translated copy, a list array of every token, its flattening,
a gather of each short token's packed integer); this loop reads each byte once, writes each token's text number,
its packed integer when it is short (at most 8 bytes) and the bytes of the long ones, and releases the GIL, so the
pipeline's splitting threads run side by side. ``cache=True`` keeps the machine code on disk.
"""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)
SPACE = 32


@jit
def split_ascii(data, offsets, table):
    """Tokens of texts ``data[offsets[i]:offsets[i + 1]]``: maximal runs of bytes that ``table`` does not map to a
    space, mapped through it. Returns per token its text and whether it is short, the short tokens' packed
    little-endian integers, and the long tokens as Arrow string offsets (int32) and bytes."""
    n_tokens, long_bytes, n_long = 0, 0, 0
    for i in range(len(offsets) - 1):
        length = 0
        for at in range(offsets[i], offsets[i + 1] + 1):
            if at < offsets[i + 1] and table[data[at]] != SPACE:
                length += 1
            elif length:
                n_tokens += 1
                if length > 8:
                    n_long += 1
                    long_bytes += length
                length = 0
    doc_ids = np.empty(n_tokens, np.int32)
    short = np.empty(n_tokens, np.bool_)
    packed = np.empty(n_tokens - n_long, np.uint64)
    long_offsets = np.zeros(n_long + 1, np.int32)
    long_data = np.empty(long_bytes, np.uint8)
    t, s, k = 0, 0, 0
    for i in range(len(offsets) - 1):
        length, start = 0, 0
        for at in range(offsets[i], offsets[i + 1] + 1):
            if at < offsets[i + 1] and table[data[at]] != SPACE:
                if length == 0:
                    start = at
                length += 1
            elif length:
                doc_ids[t] = i
                short[t] = length <= 8
                if length <= 8:
                    value = np.uint64(0)
                    for j in range(length):
                        value |= np.uint64(table[data[start + j]]) << np.uint64(8 * j)
                    packed[s] = value
                    s += 1
                else:
                    base = long_offsets[k]
                    for j in range(length):
                        long_data[base + j] = table[data[start + j]]
                    long_offsets[k + 1] = base + length
                    k += 1
                t += 1
                length = 0
    return doc_ids, short, packed, long_offsets, long_data
