"""The compiled pruned top-k search of :mod:`ark.index.bm25_prune` (:func:`top_k`): the seeds (the rarest terms'
documents and the exactly named ones) scored first, then the MaxScore walk of :mod:`ark.index._prune_kernel` over
the other terms. Imported only when a large index is searched; compiled code cached on disk (``cache=True``)."""

from __future__ import annotations

import numpy as np

from ark.index._prune_kernel import (
    DF,
    END,
    FIRST,
    P0,
    S0,
    SN,
    START,
    WIDTH,
    delta,
    jit,
    push,
    reaching_block,
    sift_down,
    term_bounds,
    term_rows,
    walk,
    weight,
    worse,
)


@jit
def top_k(blob, tfs, doc_lengths, block_last, block_max_tf, block_min_dl, skip_last, step, term_first, term_bytes,
          term_widths, term_ptr, block_ptr, skip_ptr, all_idf, query, model, slack, k, mask, named, boost,
          seed_postings):
    """Top-k (scores, docs), best first (ties by lower id), of the ``query`` ((term id, occurrences) rows in query
    order): the rarest terms' documents (up to ``seed_postings`` postings) and the ``named`` ones (sorted;
    ``boost`` added) are scored first, the rest of the documents by the walk over the other terms. A seed is looked
    up in the other terms only while its rare terms' weights plus their bounds can reach the k-th best score so far
    (at least the k-th best of the seeds' rare weights). One call from Python: a cold call costs ~30 us."""
    tids = query[:, 0].copy()
    terms = term_rows(tids, term_first, term_bytes, term_widths, term_ptr, block_ptr, skip_ptr)
    idf, count = all_idf[tids].astype(np.float64), query[:, 1].astype(np.float64)
    n = len(terms)
    rare = rare_terms(terms, seed_postings)
    seeds = seed_docs(blob, terms, rare, named, mask)
    weights, partial = seed_weights(blob, tfs, doc_lengths, terms, rare, idf, count, model, seeds)
    bounds = term_bounds(block_max_tf, block_min_dl, terms, idf, count, model, slack)
    others = 0.0
    for t in range(n):
        if not rare[t]:
            others += bounds[t]
    is_named = np.zeros(len(seeds), np.bool_)
    lower = partial / slack  # no seed's score is below its rare terms' weights (float32 rounding aside)
    for j in range(len(seeds)):
        at = np.searchsorted(named, seeds[j])
        if at < len(named) and named[at] == seeds[j]:
            is_named[j], lower[j] = True, (partial[j] + boost) / slack
    floor = -1.0 if len(seeds) <= k or others == 0 else -np.partition(-lower, k - 1)[k - 1]
    hs, hd, size = np.empty(k, np.float32), np.empty(k, np.int64), 0
    grp, pos, cur = np.zeros(n, np.int64), np.zeros(n, np.int64), np.where(terms[:, DF] > 0, terms[:, FIRST], END)
    for j in range(len(seeds)):
        d = seeds[j]
        bar = max(floor, np.float64(hs[0])) if size == k else floor
        if not is_named[j] and partial[j] * slack + others < bar:
            continue
        for t in range(n):
            if not rare[t]:
                grp[t], pos[t], cur[t] = find(blob, skip_last, terms, t, step, grp[t], pos[t], cur[t], d)
                if cur[t] == d:
                    weights[j, t] = weight(tfs, terms[t, P0] + pos[t], doc_lengths[d], idf[t], count[t], model)
        s = np.float32(0)
        for t in range(n):  # query order, as the exhaustive pass adds the terms: the same float32 sum
            s = np.float32(s + weights[j, t])
        if is_named[j]:
            s = np.float32(s + boost)
        if s > 0 and (size < k or worse(hs[0], hd[0], s, d)):
            size = push(hs, hd, size, k, s, d)
    walk_terms = np.flatnonzero(~rare)
    if len(walk_terms):
        size = walk(blob, tfs, doc_lengths, block_last, block_max_tf, block_min_dl, terms[walk_terms],
                    idf[walk_terms], count[walk_terms], model, slack, k, mask, seeds, bounds[walk_terms], hs, hd, size)
    return drain(hs, hd, size)


@jit
def drain(hs, hd, size):
    """The heap's (scores, docs), best first: its worst (the root) taken off one by one, filled from the back."""
    scores, docs = np.empty(size, np.float32), np.empty(size, np.int64)
    for last in range(size - 1, -1, -1):
        scores[last], docs[last] = hs[0], hd[0]
        hs[0], hd[0] = hs[last], hd[last]
        sift_down(hs, hd, last)
    return scores, docs


@jit
def rare_terms(terms, seed_postings):
    """The terms that seed: the rarest, while their postings total at most ``seed_postings``."""
    rare, total = np.zeros(len(terms), np.bool_), 0
    for t in np.argsort(terms[:, DF], kind="mergesort"):
        if total + terms[t, DF] > seed_postings:
            break
        rare[t], total = True, total + terms[t, DF]
    return rare


@jit
def seed_docs(blob, terms, rare, named, mask):
    """The sorted distinct documents of the ``rare`` terms and the ``named`` ones (where ``mask``, if any): each
    term's documents merged into the sorted ones so far (a query has few rare terms)."""
    total = len(named)
    for t in range(len(terms)):
        if rare[t]:
            total += terms[t, DF]
    docs, spare = np.empty(total, np.int64), np.empty(total, np.int64)
    m = len(named)
    docs[:m] = named
    for t in range(len(terms)):
        if not rare[t]:
            continue
        i, out, d = 0, 0, terms[t, FIRST]
        for p in range(terms[t, DF]):
            if p:
                d += delta(blob, terms[t, START], terms[t, WIDTH], p)
            while i < m and docs[i] < d:
                spare[out], out, i = docs[i], out + 1, i + 1
            if i < m and docs[i] == d:
                i += 1
            spare[out], out = d, out + 1
        spare[out: out + m - i] = docs[i:m]
        docs, spare, m = spare, docs, out + m - i
    kept = 0
    for i in range(m):
        if len(mask) == 0 or mask[docs[i]]:
            docs[kept] = docs[i]
            kept += 1
    return docs[:kept]


@jit
def seed_weights(blob, tfs, doc_lengths, terms, rare, idf, count, model, seeds):
    """Each seed's weight of each rare term (0 where absent; the other terms' columns left 0) and their float64
    sum per seed: the rare terms' postings merged with the sorted seeds."""
    weights, partial = np.zeros((len(seeds), len(terms)), np.float32), np.zeros(len(seeds))
    for t in range(len(terms)):
        if not rare[t]:
            continue
        d, j = terms[t, FIRST], 0
        for p in range(terms[t, DF]):
            if p:
                d += delta(blob, terms[t, START], terms[t, WIDTH], p)
            while j < len(seeds) and seeds[j] < d:
                j += 1
            if j == len(seeds):
                break
            if seeds[j] == d:
                weights[j, t] = weight(tfs, terms[t, P0] + p, doc_lengths[d], idf[t], count[t], model)
                partial[j] += np.float64(weights[j, t])
    return weights, partial


@jit
def find(blob, skip_last, terms, t, step, grp, pos, cur, c):
    """Term ``t``'s cursor ``(group, pos, cur)`` moved to its first document >= ``c`` (``END`` past its last),
    whole groups jumped through the fine skip list."""
    if cur >= c:
        return grp, pos, cur
    g0, ng = terms[t, S0], terms[t, SN]
    if skip_last[g0 + grp] < c:
        grp = reaching_block(skip_last, g0, ng, grp, c)
        if grp == ng:
            return grp, pos, END
        pos = grp * step
        cur = skip_last[g0 + grp - 1] + delta(blob, terms[t, START], terms[t, WIDTH], pos)
    while cur < c:
        pos += 1
        cur += delta(blob, terms[t, START], terms[t, WIDTH], pos)
    return grp, pos, cur
