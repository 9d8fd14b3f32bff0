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
    length_norm,
    push,
    reaching_block,
    sift_down,
    term_rows,
    walk,
    weight_at,
    worse,
)


@jit
def top_k(blob, tfs, doc_lengths, block_last, block_ratio, term_ratio, skip_last, step, term_first, term_bytes,
          term_widths, term_ptr, block_ptr, skip_ptr, all_idf, query, model, slack, k, mask, named, boost,
          seed_postings):
    """Top-k (scores, docs), best first (ties by lower id), of the ``query`` ((term id, occurrences) rows in query
    order): the rarest terms' documents (up to ``seed_postings`` postings) and the ``named`` ones (sorted;
    ``boost`` added) are scored first, the rest of the documents by the walk over the other terms. The seeds are
    looked up in the other terms a term at a time, the term of largest bound first, and a seed is dropped once its
    weights so far plus the bounds of the terms left cannot reach a floor under the final k-th best score: at
    first the k-th best of the seeds' rare weights, then of their weights so far. One call from Python: a cold call
    costs ~30 us."""
    tids = query[:, 0].copy()
    terms = term_rows(tids, term_first, term_bytes, term_widths, term_ptr, block_ptr, skip_ptr)
    idf, count = all_idf[tids].astype(np.float64), query[:, 1].astype(np.float64)
    n = len(terms)
    bounds = np.empty(n)
    for t in range(n):
        bounds[t] = idf[t] * count[t] * np.float64(term_ratio[tids[t]]) * slack
    rare = rare_terms(terms, seed_postings)
    seeds = seed_docs(blob, terms, rare, named, mask)
    norms = np.empty(len(seeds))
    for j in range(len(seeds)):  # the seeds in order: one pass over the lengths, each read once
        norms[j] = length_norm(doc_lengths[seeds[j]], model)
    weights, exact = seed_weights(blob, tfs, terms, rare, idf, count, seeds, norms)
    is_named = np.zeros(len(seeds), np.bool_)
    for j in range(len(seeds)):
        at = np.searchsorted(named, seeds[j])
        if at < len(named) and named[at] == seeds[j]:
            is_named[j] = True
            exact[j] += np.float64(boost)
    alive = score_seeds(blob, tfs, skip_last, step, terms, rare, idf, count, bounds, slack, k, seeds, norms, weights,
                        exact)
    hs, hd, size = np.empty(k, np.float32), np.empty(k, np.int64), 0
    # _prune_kernel.offer's sum and push, written out: passing it weights[j] (a view a seed) made the median query
    # 15-20% slower (27 November 2026)
    for j in alive:
        s = np.float32(0)
        for t in range(n):  # query order, as the exhaustive pass adds the terms: the same float32 sum
            s = np.float32(s + weights[j, t])
        if is_named[j]:
            s = np.float32(s + boost)
        if s > 0 and (size < k or worse(hs[0], hd[0], s, seeds[j])):
            size = push(hs, hd, size, k, s, seeds[j])
    walk_terms = np.flatnonzero(~rare)
    if len(walk_terms):
        size = walk(blob, tfs, doc_lengths, block_last, block_ratio, terms[walk_terms], idf[walk_terms],
                    count[walk_terms], model, slack, k, mask, seeds, bounds[walk_terms], hs, hd, size)
    return drain(hs, hd, size)


@jit
def score_seeds(blob, tfs, skip_last, step, terms, rare, idf, count, bounds, slack, k, seeds, norms, weights, exact):
    """The seeds (indexes, ascending) that can still reach the top k once looked up in the other terms (their
    weights put in ``weights`` and added to ``exact``), a term at a time, the term of largest bound first. ``exact``
    divided by ``slack`` is a lower bound of each seed's score (float32 rounding aside), so the k-th best of it is a
    floor under the final k-th best score; a seed whose ``exact`` plus the bounds of the terms left stays below the
    floor is dropped before its next lookup."""
    look = np.flatnonzero(~rare)
    look = look[np.argsort(-bounds[look], kind="mergesort")]
    rest = np.zeros(len(look) + 1)
    for i in range(len(look) - 1, -1, -1):
        rest[i] = rest[i + 1] + bounds[look[i]]
    alive = np.arange(len(seeds))
    for i in range(len(look)):
        floor = -1.0
        if len(alive) > k:  # the k-th best lower bound so far
            floor = -np.partition(-exact[alive] / slack, k - 1)[k - 1]
        alive = look_up(blob, tfs, skip_last, step, terms, look[i], idf, count, seeds, alive, norms, weights, exact,
                        rest[i], floor, slack)
    return alive


@jit
def look_up(blob, tfs, skip_last, step, terms, t, idf, count, seeds, alive, norms, weights, exact, reach, floor,
            slack):
    """The ``alive`` seeds whose ``exact`` (times ``slack``) plus ``reach`` (the bounds of the terms not yet looked
    up, ``t``'s included) reaches ``floor``, each looked up in term ``t``: one cursor moving forward through its
    postings, whole groups of the fine skip list jumped (galloping when far), the deltas decoded from the group's
    start."""
    start, width, p0, g0, ng = terms[t, START], terms[t, WIDTH], terms[t, P0], terms[t, S0], terms[t, SN]
    grp, pos, cur = 0, 0, terms[t, FIRST] if terms[t, DF] > 0 else END
    kept = np.empty(len(alive), np.int64)
    m = 0
    for j in alive:
        if exact[j] * slack + reach < floor:
            continue
        kept[m] = j
        m += 1
        c = seeds[j]
        if cur < c and skip_last[g0 + grp] < c:  # c lies past the current group: move to the group holding it
            if grp + 2 < ng and skip_last[g0 + grp + 2] >= c:  # within the next two groups: no search
                grp += 1 if skip_last[g0 + grp + 1] >= c else 2
            else:
                grp = reaching_block(skip_last, g0, ng, grp, c)
                if grp == ng:
                    cur = END
                    continue
            pos = grp * step
            cur = skip_last[g0 + grp - 1] + delta(blob, start, width, pos)
        while cur < c:
            pos += 1
            cur += delta(blob, start, width, pos)
        if cur == c:
            weights[j, t] = weight_at(tfs, p0 + pos, norms[j], idf[t], count[t])
            exact[j] += np.float64(weights[j, t])
    return kept[:m]


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
def seed_weights(blob, tfs, terms, rare, idf, count, seeds, norms):
    """Each seed's weight of each rare term (0 where absent; the other terms' columns left 0) and their float64
    sum per seed: the rare terms' postings merged with the sorted seeds (``norms``: their length normalisations)."""
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
                weights[j, t] = weight_at(tfs, terms[t, P0] + p, norms[j], idf[t], count[t])
                partial[j] += np.float64(weights[j, t])
    return weights, partial
