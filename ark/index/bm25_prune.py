"""Exact top-k BM25 without scoring every matching posting: MaxScore with block-max bounds, compiled with numba.

Why compiled: dynamic pruning walks the query terms' postings document by document, deciding at each document
whether the rest can still reach the k-th best score and skipping whole blocks when not. That control flow is
sequential per posting; numpy can only express it by scoring every posting (the exhaustive path this replaces on
large indexes). numba (a PyPI wheel) compiles the loop; it is imported only when a large index is searched, and the
compiled code is cached on disk, so neither ``ark --help`` nor a question over a small graph pays for it.

The algorithm (Turtle & Flood's MaxScore; block bounds as in Ding & Suel's block-max indexes): terms are sorted by
their largest possible contribution. Once k documents are held, the cheapest terms whose bounds sum to less than the
k-th best score are *non-essential*: a document matching only them cannot enter, so only documents of the essential
terms are visited. For each, the essential terms' exact weights plus the non-essential terms' bounds on the block
holding that document must reach the k-th score, or the document is skipped without decoding those blocks;
otherwise the non-essential terms are looked up through their skip lists, cheapest last, stopping once the bound
fails. A document's score is summed in float32 in query-term order, as the exhaustive path adds them, so scores are
bit-identical and the result (ties by lower id) equals the exhaustive one. Bounds are float64 and inflated by
:data:`BOUND_SLACK` over float32 rounding, so a pruned document can never have reached the result.
"""

from __future__ import annotations

import functools

import numpy as np

from ark.index.postings import BLOCK

BOUND_SLACK = 1e-5
END = np.int64(2**62)


@functools.cache
def kernel():
    """The compiled search function (numba imported and the code compiled or read from its cache on first use)."""
    import numba

    njit = numba.njit(cache=True, nogil=True)

    @njit
    def delta(blob, start, width, pos):
        at = start + pos * width
        if width == 1:
            return np.int64(blob[at])
        if width == 2:
            return np.int64(blob[at]) | (np.int64(blob[at + 1]) << 8)
        return (np.int64(blob[at]) | (np.int64(blob[at + 1]) << 8) | (np.int64(blob[at + 2]) << 16)
                | (np.int64(blob[at + 3]) << 24))

    @njit
    def weight(tfs, p, dl, idf, count, k1, b, avgdl):
        tf = np.float64(tfs[p])
        norm = k1 * (1.0 - b + b * np.float64(dl) / avgdl)
        w = np.float32(idf * tf / (tf + norm))
        if count != 1.0:
            w = np.float32(w * np.float32(count))
        return w

    @njit
    def worse(s1, d1, s2, d2):
        return s1 < s2 or (s1 == s2 and d1 > d2)

    @njit
    def sift_down(hs, hd, size, i):
        while True:
            low, left, right = i, 2 * i + 1, 2 * i + 2
            if left < size and worse(hs[left], hd[left], hs[low], hd[low]):
                low = left
            if right < size and worse(hs[right], hd[right], hs[low], hd[low]):
                low = right
            if low == i:
                return
            hs[i], hs[low] = hs[low], hs[i]
            hd[i], hd[low] = hd[low], hd[i]
            i = low

    @njit
    def push(hs, hd, size, k, s, d):
        """Offer (s, d) to the heap of the k best (root: the worst held); returns the new size."""
        if size < k:
            hs[size], hd[size] = s, d
            i = size
            while i > 0:
                parent = (i - 1) // 2
                if not worse(hs[i], hd[i], hs[parent], hd[parent]):
                    break
                hs[i], hs[parent] = hs[parent], hs[i]
                hd[i], hd[parent] = hd[parent], hd[i]
                i = parent
            return size + 1
        if worse(hs[0], hd[0], s, d):
            hs[0], hd[0] = s, d
            sift_down(hs, hd, size, 0)
        return size

    @njit
    def search(blob, tfs, doc_lengths, block_last, block_max_tf, block_min_dl, first, start, width, p0, df, b0,
               nb, idf, count, k1, b, avgdl, k, mask, skip, seed_scores, seed_docs):
        """Top-k (scores, docs) unsorted; per-term arrays in query order; ``skip`` (sorted) ids already seeded."""
        n = len(first)
        slack = 1.0 + BOUND_SLACK
        # Per-block bounds need no decoding: weight(max tf, min length) of each block.
        ub_term = np.zeros(n)
        for t in range(n):
            for j in range(b0[t], b0[t] + nb[t]):
                ub = np.float64(weight(block_max_tf, j, block_min_dl[j], idf[t], count[t], k1, b, avgdl)) * slack
                if ub > ub_term[t]:
                    ub_term[t] = ub
        order = np.argsort(ub_term)
        prefix = np.cumsum(ub_term[order])
        hs = np.empty(k, np.float32)
        hd = np.empty(k, np.int64)
        size = 0
        for i in range(len(seed_docs)):
            size = push(hs, hd, size, k, seed_scores[i], seed_docs[i])
        pos = np.zeros(n, np.int64)
        cur = np.empty(n, np.int64)
        blk = np.zeros(n, np.int64)
        for t in range(n):
            cur[t] = first[t] if df[t] > 0 else END
        wq = np.zeros(n, np.float32)
        n_skip = 0
        essential = 0
        theta = np.float64(-1.0)
        if size == k:
            theta = np.float64(hs[0])
            while essential < n and prefix[essential] < theta:
                essential += 1
        while essential < n:
            d = END
            for i in range(essential, n):
                if cur[order[i]] < d:
                    d = cur[order[i]]
            if d == END:
                break
            exact = 0.0
            for t in range(n):
                wq[t] = 0
            for i in range(essential, n):
                t = order[i]
                if cur[t] == d:
                    w = weight(tfs, p0[t] + pos[t], doc_lengths[d], idf[t], count[t], k1, b, avgdl)
                    wq[t] = w
                    exact += np.float64(w)
                    pos[t] += 1
                    cur[t] = cur[t] + delta(blob, start[t], width[t], pos[t]) if pos[t] < df[t] else END
            while n_skip < len(skip) and skip[n_skip] < d:
                n_skip += 1
            if (len(mask) and not mask[d]) or (n_skip < len(skip) and skip[n_skip] == d):
                continue
            rejected = False
            if essential > 0:
                bound = exact * slack
                for i in range(essential):
                    t = order[i]
                    while blk[t] < nb[t] and block_last[b0[t] + blk[t]] < d:
                        blk[t] += 1
                    if blk[t] < nb[t]:
                        j = b0[t] + blk[t]
                        bound += np.float64(weight(block_max_tf, j, block_min_dl[j], idf[t], count[t], k1, b,
                                                   avgdl)) * slack
                rejected = bound < theta
                i = essential - 1
                while not rejected and i >= 0:
                    if (exact * slack + prefix[i]) < theta:
                        rejected = True
                        break
                    t = order[i]
                    if blk[t] < nb[t] and cur[t] < d:
                        if pos[t] // BLOCK < blk[t]:
                            pos[t] = blk[t] * BLOCK
                            cur[t] = block_last[b0[t] + blk[t] - 1] + delta(blob, start[t], width[t], pos[t])
                        while cur[t] < d:
                            pos[t] += 1
                            cur[t] = cur[t] + delta(blob, start[t], width[t], pos[t])
                    if blk[t] < nb[t] and cur[t] == d:
                        w = weight(tfs, p0[t] + pos[t], doc_lengths[d], idf[t], count[t], k1, b, avgdl)
                        wq[t] = w
                        exact += np.float64(w)
                    i -= 1
            if rejected:
                continue
            s = np.float32(0)
            for t in range(n):
                s = np.float32(s + wq[t])
            if s > 0 and (size < k or worse(hs[0], hd[0], s, d)):
                size = push(hs, hd, size, k, s, d)
                if size == k:
                    theta = np.float64(hs[0])
                    while essential < n and prefix[essential] < theta:
                        essential += 1
        return hs[:size].copy(), hd[:size].copy()

    return search


def available() -> bool:
    """Whether numba is installed (checked without importing it)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def pruned_top_k(postings, terms: list[tuple[int, int]], idf: np.ndarray, k1: float, b: float, avgdl: float, k: int,
                 mask: np.ndarray | None, seed_docs: np.ndarray, seed_scores: np.ndarray,
                 skip: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` (ids, scores) over ``terms`` ((term id, occurrences) in query order), descending, ties by lower id.

    ``seed_docs``/``seed_scores`` are documents already scored (the exactly named ones); ``skip`` (sorted) are the
    documents the walk must not score again."""
    tids = np.array([t for t, _ in terms], dtype=np.int64)
    ptr = np.asarray(postings.term_ptr)
    p0 = ptr[tids]
    scores, docs = kernel()(
        np.asarray(postings.doc_deltas), np.asarray(postings.tfs), np.asarray(postings.doc_lengths),
        np.asarray(postings.block_last), np.asarray(postings.block_max_tf), np.asarray(postings.block_min_dl),
        np.asarray(postings.term_first)[tids].astype(np.int64), np.asarray(postings.term_bytes)[tids],
        np.asarray(postings.term_widths)[tids].astype(np.int64), p0, ptr[tids + 1] - p0, postings.block_ptr[tids],
        postings.block_ptr[tids + 1] - postings.block_ptr[tids], idf[tids].astype(np.float64),
        np.array([c for _, c in terms], dtype=np.float64), float(k1), float(b), float(avgdl), int(k),
        np.zeros(0, dtype=np.bool_) if mask is None else mask, skip.astype(np.int64),
        seed_scores.astype(np.float32), seed_docs.astype(np.int64))
    order = np.lexsort((docs, -scores))
    return docs[order], scores[order]
