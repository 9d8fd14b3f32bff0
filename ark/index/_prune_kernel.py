"""The compiled loops of :mod:`ark.index.bm25_prune` (imported only when a large index is searched: numba costs
start-up time). ``cache=True`` keeps the machine code on disk, so only the first search after an install compiles.

Per query term ``t`` the int64 row ``terms[t]`` holds :data:`FIRST` (its first document), :data:`START` (its first
delta's byte), :data:`WIDTH` (bytes a delta), :data:`P0` (its first posting's index), :data:`DF`, :data:`B0` (its
first block), :data:`NB` (its number of blocks) and, for :func:`top_k`, :data:`S0`/:data:`SN` (its first group
and number of groups of the fine skip list); ``model`` is ``(k1, b, avgdl)``.
"""

from __future__ import annotations

import numba
import numpy as np

from ark.index._prefetch import prefetch
from ark.index.postings import BLOCK

END = np.int64(2**62)
FIRST, START, WIDTH, P0, DF, B0, NB, S0, SN = range(9)
AHEAD = 8  # subset scoring hints the lines of the candidate this many ahead (16 measured the same)
jit = numba.njit(cache=True, nogil=True)


@jit
def term_rows(tids, term_first, term_bytes, term_widths, term_ptr, groups, skips):
    """The rows ``terms`` of the terms ``tids`` (see the module doc): ``groups`` are each term's first block (or
    group of another skip list, then in :data:`B0`/:data:`NB`), ``skips`` its first group of the fine skip list."""
    rows = np.empty((len(tids), 9), np.int64)
    for i in range(len(tids)):
        t = tids[i]
        rows[i, FIRST], rows[i, START], rows[i, WIDTH] = term_first[t], term_bytes[t], term_widths[t]
        rows[i, P0], rows[i, DF] = term_ptr[t], term_ptr[t + 1] - term_ptr[t]
        rows[i, B0], rows[i, NB] = groups[t], groups[t + 1] - groups[t]
        rows[i, S0], rows[i, SN] = skips[t], skips[t + 1] - skips[t]
    return rows


@jit
def delta(blob, start, width, pos):
    """The ``pos``-th delta of a term whose deltas start at byte ``start``, ``width`` bytes each (little-endian)."""
    at = start + pos * width
    value = np.int64(blob[at])
    for byte in range(1, width):
        value |= np.int64(blob[at + byte]) << (8 * byte)
    return value


@jit
def weight(tfs, p, dl, idf, count, model):
    """:func:`ark.index.postings.bm25_weights` of one posting, the same operations in the same order. The length
    norm is :func:`length_norm`'s, written out: calling it here made the walk's p90 query ~4% slower."""
    return weight_at(tfs, p, model[0] * (1.0 - model[1] + model[1] * np.float64(dl) / model[2]), idf, count)


@jit
def length_norm(dl, model):
    """The length normalisation ``k1 * (1 - b + b * dl / avgdl)`` of a document of ``dl`` tokens."""
    return model[0] * (1.0 - model[1] + model[1] * np.float64(dl) / model[2])


@jit
def weight_at(tfs, p, doc_norm, idf, count):
    """:func:`weight` of a posting whose document's :func:`length_norm` ``doc_norm`` is known."""
    tf = np.float64(tfs[p])
    w = np.float32(idf * tf / (tf + doc_norm))
    if count != 1.0:
        w = np.float32(w * np.float32(count))
    return w


@jit
def worse(s1, d1, s2, d2):
    """Whether (score s1, doc d1) ranks after (s2, d2): lower score, or the same score and a higher id."""
    return s1 < s2 or (s1 == s2 and d1 > d2)


@jit
def push(hs, hd, size, k, s, d):
    """Offer (s, d) to the heap of the k best (its root is the worst held); returns the heap's new size."""
    if size < k:
        i = size
        hs[i], hd[i] = s, d
        while i > 0 and worse(hs[i], hd[i], hs[(i - 1) // 2], hd[(i - 1) // 2]):
            parent = (i - 1) // 2
            hs[i], hs[parent], hd[i], hd[parent] = hs[parent], hs[i], hd[parent], hd[i]
            i = parent
        return size + 1
    if not worse(hs[0], hd[0], s, d):
        return size
    hs[0], hd[0] = s, d
    sift_down(hs, hd, size)
    return size


@jit
def sift_down(hs, hd, size):
    """Restore the heap order of its first ``size`` entries after their root was replaced."""
    i = 0
    while True:
        low, left, right = i, 2 * i + 1, 2 * i + 2
        if left < size and worse(hs[left], hd[left], hs[low], hd[low]):
            low = left
        if right < size and worse(hs[right], hd[right], hs[low], hd[low]):
            low = right
        if low == i:
            return
        hs[i], hs[low], hd[i], hd[low] = hs[low], hs[i], hd[low], hd[i]
        i = low


@jit
def block_ratios(block_max_tf, block_min_dl, block_ptr, model):
    """Each block's largest ``tf / (tf + k1 * (1 - b + b * dl / avgdl))`` (its largest frequency at its shortest
    length), as float32 rounded up, and each term's largest over its blocks (0 for a term without postings): a
    weight is ``idf * ratio``, so a bound costs a multiplication, not a division, per block and query."""
    ratio = np.empty(len(block_max_tf), np.float32)
    for j in range(len(block_max_tf)):
        tf = np.float64(block_max_tf[j])
        exact = tf / (tf + norm(block_min_dl, j, model))
        ratio[j] = np.float32(exact)
        if np.float64(ratio[j]) < exact:
            ratio[j] = np.nextafter(ratio[j], np.float32(2.0))
    terms = np.zeros(len(block_ptr) - 1, np.float32)
    for t in range(len(terms)):
        for j in range(block_ptr[t], block_ptr[t + 1]):
            terms[t] = max(terms[t], ratio[j])
    return ratio, terms


@jit
def block_bound(block_ratio, j, idf, count, slack):
    """Upper bound of every weight in block ``j`` (its ratio times the term's idf and occurrences, inflated by
    ``slack`` over float32 rounding)."""
    return np.float64(idf) * count * np.float64(block_ratio[j]) * slack


@jit
def seek_block(block_last, terms, t, d, blk):
    """Move term ``t``'s block pointer to the first block that may hold ``d``; False when past its last block."""
    while blk[t] < terms[t, NB] and block_last[terms[t, B0] + blk[t]] < d:
        blk[t] += 1
    return blk[t] < terms[t, NB]


@jit
def seek(blob, block_last, start, width, block, first_block, pos, cur, d):
    """A term's cursor ``(pos, cur)`` moved to its first document >= ``d`` inside its block ``block`` (already
    sought; ``first_block`` is the term's first block). Scalars in and out: numba reference-counts every array
    argument of a call (~90 ns for a call with many), and this runs for most visited documents."""
    if cur >= d:
        return pos, cur
    if pos // BLOCK < block:  # jump over whole blocks: their last documents are the skip list
        pos = block * BLOCK
        cur = block_last[first_block + block - 1] + delta(blob, start, width, pos)
    while cur < d:
        pos += 1
        cur += delta(blob, start, width, pos)
    return pos, cur


@jit
def block_window(block_last, block_ratio, terms, idf, count, slack, d, blk, wb):
    """``(bound, end)``: every document from ``d`` to ``end`` (the first end of a block holding ``d``) scores at
    most ``bound``, the sum of the bounds of each term's block holding ``d``; ``wb[t]`` gets term ``t``'s bound."""
    bound, end = 0.0, END
    for t in range(len(terms)):
        wb[t] = 0.0
        if seek_block(block_last, terms, t, d, blk):
            j = terms[t, B0] + blk[t]
            wb[t] = block_bound(block_ratio, j, idf[t], count[t], slack)
            bound += wb[t]
            end = min(end, np.int64(block_last[j]))
    return bound, end


@jit
def skip_past(blob, block_last, terms, order, essential, end, pos, cur, blk):
    """Move the essential cursors to their first documents after ``end`` (whole blocks jumped, not decoded)."""
    for i in range(essential, len(terms)):
        t = order[i]
        if cur[t] > end:
            continue
        if seek_block(block_last, terms, t, end + 1, blk):
            pos[t], cur[t] = seek(blob, block_last, terms[t, START], terms[t, WIDTH], blk[t], terms[t, B0], pos[t],
                                  cur[t], end + 1)
        else:
            pos[t], cur[t] = terms[t, DF], END


@jit
def walk(blob, tfs, doc_lengths, block_last, block_ratio, terms, idf, count, model, slack, k, mask,
         skip, bounds, hs, hd, size):
    """MaxScore over ``terms`` (query order; ``bounds`` their largest block bounds) into the heap ``hs``/``hd`` of
    ``size`` documents, passing over the documents ``skip`` (sorted, already scored); returns the heap's size.

    One function for the per-document path: a call passing arrays costs numba ~90 ns of reference counting."""
    n = len(terms)
    order = np.argsort(bounds)
    prefix = np.cumsum(bounds[order])
    cur = np.empty(n, np.int64)
    for t in range(n):
        cur[t] = terms[t, FIRST] if terms[t, DF] > 0 else END
    pos, blk, wq, wb = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.float32), np.zeros(n)
    n_skip, essential, theta, window_bound, window_end = 0, 0, np.float64(-1.0), 0.0, np.int64(-1)
    while True:
        if size == k:
            theta = np.float64(hs[0])
            while essential < n and prefix[essential] < theta:
                essential += 1
            if essential == n - 1:  # one essential term left: most of a long walk, in its own tight loop
                return walk_one(blob, tfs, doc_lengths, block_last, block_ratio, terms, idf, count, model, slack, k,
                                mask, skip, order, prefix, pos, cur, blk, wq, wb, n_skip, hs, hd, size)
        d = END
        for i in range(essential, n):
            d = min(d, cur[order[i]])
        if d == END:
            break
        if size == k:  # block-max skip, the window's bound computed once per window
            if d > window_end:
                window_bound, window_end = block_window(block_last, block_ratio, terms, idf, count, slack, d, blk,
                                                        wb)
            if window_bound < theta:
                skip_past(blob, block_last, terms, order, essential, window_end, pos, cur, blk)
                continue
        wq[:] = 0
        exact = 0.0
        for i in range(essential, n):
            t = order[i]
            if cur[t] == d:
                wq[t] = weight(tfs, terms[t, P0] + pos[t], doc_lengths[d], idf[t], count[t], model)
                exact += np.float64(wq[t])
                pos[t] += 1
                cur[t] = cur[t] + delta(blob, terms[t, START], terms[t, WIDTH], pos[t]) if pos[t] < terms[t, DF] \
                    else END
        while n_skip < len(skip) and skip[n_skip] < d:
            n_skip += 1
        if (len(mask) and not mask[d]) or (n_skip < len(skip) and skip[n_skip] == d):
            continue
        if essential:  # the non-essential terms: their bounds on this window, then lookups, cheapest last
            bound = exact * slack
            for i in range(essential):
                bound += wb[order[i]]
            i = essential - 1 if bound >= theta else -2
            while i >= 0 and exact * slack + prefix[i] >= theta:
                t = order[i]
                if blk[t] < terms[t, NB]:
                    pos[t], cur[t] = seek(blob, block_last, terms[t, START], terms[t, WIDTH], blk[t], terms[t, B0],
                                          pos[t], cur[t], d)
                    if cur[t] == d:
                        wq[t] = weight(tfs, terms[t, P0] + pos[t], doc_lengths[d], idf[t], count[t], model)
                        exact += np.float64(wq[t])
                i -= 1
            if i != -1:  # the bound failed
                continue
        size = offer(hs, hd, size, k, wq, d)
    return size


@jit
def walk_one(blob, tfs, doc_lengths, block_last, block_ratio, terms, idf, count, model, slack, k, mask, skip, order,
             prefix, pos, cur, blk, wq, wb, n_skip, hs, hd, size):
    """:func:`walk` from where only the term ``order[-1]`` is essential (the heap full) to its end: its documents in
    a loop of scalars, each term's block bound refreshed only once the document passes that block's end, a whole
    window skipped when the bounds on it cannot reach the k-th best, the other terms looked up, cheapest last, only
    while the document can still enter: the result of :func:`walk`'s own loop, with less work a document."""
    n = len(terms)
    e = order[n - 1]
    start, width, p0, b0, df = terms[e, START], terms[e, WIDTH], terms[e, P0], terms[e, B0], terms[e, DF]
    pe, d, theta = pos[e], cur[e], np.float64(hs[0])
    ends = np.full(n, np.int64(-1))
    while d != END:
        window_end, others = END, 0.0
        for i in range(n):
            t = order[i]
            if d > ends[t]:
                if seek_block(block_last, terms, t, d, blk):
                    wb[t] = block_bound(block_ratio, terms[t, B0] + blk[t], idf[t], count[t], slack)
                    ends[t] = block_last[terms[t, B0] + blk[t]]
                else:
                    wb[t], ends[t] = 0.0, END
            window_end = min(window_end, ends[t])
            if i < n - 1:
                others += wb[t]
        if wb[e] + others < theta:  # nothing in this window can enter: on to the essential term's next window
            if window_end == END or not seek_block(block_last, terms, e, window_end + 1, blk):
                break
            pe, d = seek(blob, block_last, start, width, blk[e], b0, pe, d, window_end + 1)
            continue
        w = weight(tfs, p0 + pe, doc_lengths[d], idf[e], count[e], model)
        exact = np.float64(w)
        while n_skip < len(skip) and skip[n_skip] < d:
            n_skip += 1
        passed_over = (len(mask) and not mask[d]) or (n_skip < len(skip) and skip[n_skip] == d)
        if not passed_over and exact * slack + others >= theta:
            wq[:] = 0
            wq[e] = w
            # walk()'s lookup loop, written out again: as a function (jit, or inlined by numba) it made the
            # 200-query mean 20-35% slower at 1M and 3M (measured 27 November 2026)
            i = n - 2
            while i >= 0 and exact * slack + prefix[i] >= theta:
                t = order[i]
                if blk[t] < terms[t, NB]:
                    pos[t], cur[t] = seek(blob, block_last, terms[t, START], terms[t, WIDTH], blk[t], terms[t, B0],
                                          pos[t], cur[t], d)
                    if cur[t] == d:
                        wq[t] = weight(tfs, terms[t, P0] + pos[t], doc_lengths[d], idf[t], count[t], model)
                        exact += np.float64(wq[t])
                i -= 1
            if i == -1:
                size = offer(hs, hd, size, k, wq, d)
                theta = np.float64(hs[0])
                if prefix[n - 1] < theta:  # no document of the essential term alone can enter any more
                    break
        pe += 1
        d = d + delta(blob, start, width, pe) if pe < df else END
    return size


@jit
def offer(hs, hd, size, k, wq, d):
    """Offer document ``d`` to the heap of the k best: its weights ``wq`` summed in query order in float32 (as the
    exhaustive pass adds the terms); only a score > 0. The heap's new size."""
    s = np.float32(0)
    for t in range(len(wq)):
        s = np.float32(s + wq[t])
    if s > 0 and (size < k or worse(hs[0], hd[0], s, d)):
        size = push(hs, hd, size, k, s, d)
    return size


@jit
def reaching_block(block_last, first_block, blocks, blk, d):
    """The first of a term's blocks from ``blk`` on whose last document is >= ``d`` (``blocks`` when none):
    galloping, then binary search, over the block skip list."""
    step, lo = 1, blk
    while lo + step < blocks and block_last[first_block + lo + step] < d:
        lo += step
        step *= 2
    hi = min(lo + step, blocks)  # block_last[lo] < d (or lo == blk), block_last[hi] >= d or hi == blocks
    if block_last[first_block + lo] >= d:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if block_last[first_block + mid] < d:
            lo = mid
        else:
            hi = mid
    return hi


@jit
def norm(doc_lengths, d, model):
    """:func:`length_norm` of document ``d``."""
    return length_norm(doc_lengths[d], model)


@jit
def subset_scores(blob, tfs, doc_lengths, skip_last, terms, step, idf, count, model, cands):
    """float32 scores of the sorted distinct ``cands``, term by term in query order (the numpy path's sums): each
    term's cursor moves forward through the candidates, whole groups of ``step`` postings jumped through the skip
    list ``skip_last`` (``terms[t, B0]``/``terms[t, NB]``: the term's first group and its number of groups), so a
    term's postings are decoded only in the groups holding a candidate, and only up to it, the lines of the group
    :data:`AHEAD` candidates on (guessed from an even spread) hinted to the cache. A candidate's length
    normalisation is computed once, when it first matches (the same operations as :func:`weight`, so the same
    bits)."""
    acc = np.zeros(len(cands), np.float32)
    norms = np.full(len(cands), -1.0)  # each made when the candidate first matches (most match no term)
    for t in range(len(terms)):
        if terms[t, DF] == 0:
            continue
        start, width, g0, ng, p0 = terms[t, START], terms[t, WIDTH], terms[t, B0], terms[t, NB], terms[t, P0]
        grp, pos, cur = 0, 0, terms[t, FIRST]
        first, scale = cur, ng / max(skip_last[g0 + ng - 1] - cur, 1)  # groups a document (a float: no division)
        for i in range(np.searchsorted(cands, cur), len(cands)):  # candidates before its first document: no match
            c = cands[i]
            if i + AHEAD < len(cands):  # the lines of a later candidate's group, where the documents spread evenly
                guess = min(np.int64((cands[i + AHEAD] - first) * scale), ng - 1)
                if guess > grp:
                    prefetch(skip_last, g0 + guess)
                    prefetch(blob, start + guess * step * width)
                    prefetch(tfs, p0 + guess * step)
            if c < cur:
                continue
            if skip_last[g0 + grp] < c:
                grp = reaching_block(skip_last, g0, ng, grp, c)
                if grp == ng:
                    break
                pos = grp * step
                cur = skip_last[g0 + grp - 1] + delta(blob, start, width, pos)
            if width == 1:  # one byte a delta (frequent terms): the decoding loop without the byte loop
                at = start + pos
                while cur < c:
                    at += 1
                    cur += blob[at]
                pos = at - start
            else:
                while cur < c:
                    pos += 1
                    cur += delta(blob, start, width, pos)
            if cur == c:
                if norms[i] < 0:
                    norms[i] = norm(doc_lengths, c, model)
                acc[i] = np.float32(acc[i] + weight_at(tfs, p0 + pos, norms[i], idf[t], count[t]))
    return acc


@jit
def radix_order(keys, high):
    """The stable ascending order of non-negative ``keys`` (at most ``high``): least significant digit first,
    11 bits a pass (two passes below 4M documents), ~10x faster than numpy's argsort on a few thousand keys."""
    n = len(keys)
    order, spare = np.arange(n), np.empty(n, np.int64)
    shift = 0
    while (high >> shift) > 0:
        counts = np.zeros(2049, np.int64)
        for i in range(n):
            counts[((keys[order[i]] >> shift) & 2047) + 1] += 1
        for j in range(2048):
            counts[j + 1] += counts[j]
        for i in range(n):
            digit = (keys[order[i]] >> shift) & 2047
            spare[counts[digit]] = order[i]
            counts[digit] += 1
        order, spare = spare, order
        shift += 11
    return order


@jit
def candidate_scores(blob, tfs, doc_lengths, skip_last, terms, step, idf, count, model, cands, high):
    """:func:`subset_scores` of ``cands`` in any order, repeats allowed (the scores in the same order): sorted and
    made distinct here, scored, and put back, in one call."""
    n = len(cands)
    order = radix_order(cands, high)
    distinct, slot, m = np.empty(n, np.int64), np.empty(n, np.int64), 0
    for j in range(n):
        c = cands[order[j]]
        if m == 0 or distinct[m - 1] != c:
            distinct[m] = c
            m += 1
        slot[order[j]] = m - 1
    acc = subset_scores(blob, tfs, doc_lengths, skip_last, terms, step, idf, count, model, distinct[:m])
    out = np.empty(n, np.float32)
    for i in range(n):
        out[i] = acc[slot[i]]
    return out


@jit
def doc_norms(doc_lengths, model):
    """Every document's :func:`length_norm` (the same operations, so the same bits), for :func:`accumulate`."""
    norms = np.empty(len(doc_lengths))
    for d in range(len(doc_lengths)):
        norms[d] = length_norm(doc_lengths[d], model)
    return norms


@jit
def accumulate(blob, tfs, norms, terms, idf, count, scores):
    """Add every posting's weight of each term, in query order, into ``scores`` (one float32 per document): the
    exhaustive pass, term at a time, compiled (a long query's postings are streamed once, nothing per document).
    ``norms`` are the documents' length normalisations (:func:`doc_norms`): read, not made, per posting, and a
    term of one-byte deltas decoded without the byte loop (together ~45% off an HPO passage of common words)."""
    for t in range(len(terms)):
        start, width, p0, it, c = terms[t, START], terms[t, WIDTH], terms[t, P0], idf[t], count[t]
        d = terms[t, FIRST]
        for p in range(terms[t, DF]):
            if p:
                d += np.int64(blob[start + p]) if width == 1 else delta(blob, start, width, p)
            scores[d] = np.float32(scores[d] + weight_at(tfs, p0 + p, norms[d], it, c))


@jit
def dense_top_k(scores, k, mask):
    """The ``k`` best (scores, docs) of a dense score array, unsorted; only scores > 0 and, with a ``mask``, only
    documents where it is True."""
    hs, hd, size = np.empty(k, np.float32), np.empty(k, np.int64), 0
    for d in range(len(scores)):
        s = scores[d]
        if s > 0 and (size < k or worse(hs[0], hd[0], s, d)) and (len(mask) == 0 or mask[d]):
            size = push(hs, hd, size, k, s, d)
    return hs[:size].copy(), hd[:size].copy()
