"""Neighbors(v, q, F): the filtered one-hop neighborhood of a node, ranked, computed with array operations.

Everything over the whole neighborhood is vectorised (numpy / pyarrow compute) so hub nodes with thousands of
neighbors cost milliseconds; Python loops only touch the few neighbors that are shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ark.arrays import F64, I64, Bools, Ints, sorted_unique
from ark.graph import KnowledgeGraph
from ark.index.topk import top_k
from ark.text import ENGLISH_STOPWORDS, words

DESCRIBE_AHEAD = 64  # neighbours whose relations are looked up together, on the first ``relations_of`` call
SMALL_NEIGHBORHOOD = 4096  # below this many edges np.unique is as fast as the run-wise pass


@dataclass
class RankedNeighborhood:
    """The ranked unique neighbors (best first; only the first ``limit`` when ranked with one), how many unique
    neighbors there are in all and how many matched the query."""

    nodes: Ints
    total: int
    matching: int | None
    relation_nodes: Ints  # the filtered edge arrays, kept to describe the shown neighbors' relations
    relation_codes: Ints
    relation_outgoing: Bools
    runs: I64 | None = None  # run starts when each run of equal (relation, direction) has sorted neighbors
    _described: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict, repr=False)

    def relations_of(self, node: int) -> tuple[list[int], list[int]]:
        """Relation codes of the edges centre→node and node→centre, in row order."""
        node = int(node)
        if node not in self._described:
            wanted = [node] if self._described else [node, *self.nodes[:DESCRIBE_AHEAD].tolist()]
            self._described.update(self._describe(wanted))
        return self._described[node]

    def _describe(self, wanted: list[int]) -> dict[int, tuple[list[int], list[int]]]:
        """Relations of several neighbours in one pass: a binary search per run of the row when the runs are sorted
        (a hub's row has a handful of runs), else one membership test over the edges."""
        targets = sorted_unique(np.asarray(wanted, dtype=self.relation_nodes.dtype))
        if self.runs is not None:
            ends = np.append(self.runs[1:], len(self.relation_nodes))
            found = []
            for start, end in zip(self.runs.tolist(), ends.tolist(), strict=True):
                run = self.relation_nodes[start:end]
                pos = np.minimum(np.searchsorted(run, targets), len(run) - 1)
                found.append(start + pos[run[pos] == targets])
            positions = np.sort(np.concatenate(found)) if found else np.zeros(0, np.int64)
        else:
            positions = np.flatnonzero(np.isin(self.relation_nodes, targets))
        described: dict[int, tuple[list[int], list[int]]] = {int(t): ([], []) for t in targets.tolist()}
        for neighbor, code, out in zip(self.relation_nodes[positions].tolist(), self.relation_codes[positions].tolist(),
                                       self.relation_outgoing[positions].tolist(), strict=True):
            side = described[neighbor][0 if out else 1]
            if code not in side:
                side.append(code)
        return described


def filtered_neighborhood(graph: KnowledgeGraph, node: int, relations: list[str] | None,
                          type_codes: list[int] | None) -> tuple[Ints, Ints, Bools]:
    """Edge arrays (neighbor, relation code, outgoing) around ``node`` whose relation is one of ``relations`` and
    whose neighbor's type code is one of ``type_codes`` (None: no filter)."""
    one = relations[0] if relations is not None and len(relations) == 1 else None
    found = graph.neighbors(node, relation=one)  # a single relation is a slice of the CSR arrays
    nodes, codes, outgoing = np.asarray(found.nodes), np.asarray(found.relations), np.asarray(found.outgoing)
    keep = None
    if relations is not None and one is None:
        keep = np.isin(codes, [graph.relation_code(r) for r in relations])
    if type_codes is not None:
        typed = np.isin(graph.node_type_codes[nodes], type_codes)
        keep = typed if keep is None else keep & typed
    if keep is not None:
        nodes, codes, outgoing = nodes[keep], codes[keep], outgoing[keep]
    return nodes, codes, outgoing


def rank_neighborhood(graph: KnowledgeGraph, index, nodes: Ints, codes: Ints, outgoing: Bools,
                      query: str | None, ranking: str, limit: int | None = None) -> RankedNeighborhood:
    """Rank the unique neighbors: BM25 of ``query`` (default) or the reference keyword rule; no query keeps
    row order, i.e. by relation, then direction (outgoing first), then node index. Ties keep that order too.
    With ``limit`` only the best ``limit`` are ranked and kept (a hub's full ranking is never sorted)."""
    unique, runs = _unique_in_row_order(nodes, codes, outgoing)
    total = len(unique)
    matching: int | None = None
    if query and len(unique):
        if ranking == "keyword":
            keyword_scores = _keyword_scores(graph, unique, query)
            keep = keyword_scores > 0
            unique, scores = unique[keep], keyword_scores[keep]
            matching = total = int(len(unique))
        else:
            scores = np.asarray(index.score(query, unique.astype(np.int64)), dtype=np.float64)
            matching = int(np.count_nonzero(scores > 0))
        if limit is None or limit >= len(unique):
            unique = unique[np.argsort(-scores, kind="stable")]
        else:
            unique = unique[_stable_top(scores, limit)]
    elif limit is not None:
        unique = unique[:limit]
    return RankedNeighborhood(unique, total, matching, nodes, codes, outgoing, runs)


def _stable_top(scores: F64, limit: int) -> I64:
    """Positions of the first ``limit`` of ``np.argsort(-scores, kind="stable")`` without sorting everything: the
    matching (positive) scores by top-k, ties by position, then the others in their stable order."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) >= limit:
        return top_k(positive, scores[positive], limit)[0]
    rest = np.flatnonzero(scores <= 0)
    if np.any(scores[rest] < 0):
        rest = rest[np.argsort(-scores[rest], kind="stable")]
    return np.concatenate([top_k(positive, scores[positive], len(positive))[0], rest[: limit - len(positive)]])


def _unique_in_row_order(nodes: Ints, codes: Ints, outgoing: Bools) -> tuple[Ints, I64 | None]:
    """The distinct neighbors in order of first occurrence, and the run starts when every run of equal (relation,
    direction) lists its neighbors in ascending order (as a CSR row does; None otherwise).

    A neighbor repeats only across runs (linked by several relations or both directions), so for a large row one
    pass per run over a mark array replaces sorting the whole row; small rows, and rows that are not sorted runs,
    use ``np.unique``.
    """
    n = len(nodes)
    if n == 0:
        return nodes, None
    change = (codes[1:] != codes[:-1]) | (outgoing[1:] != outgoing[:-1])
    runs: I64 | None = np.concatenate([[0], np.flatnonzero(change) + 1])
    if not bool(np.all((nodes[1:] > nodes[:-1]) | change)):
        runs = None
    if runs is None or n < SMALL_NEIGHBORHOOD:
        unique, first = np.unique(nodes, return_index=True)
        return unique[np.argsort(first, kind="stable")], runs
    if len(runs) == 1:
        return nodes, runs
    seen = np.zeros(int(nodes.max()) + 1, dtype=bool)
    keep = np.empty(n, dtype=bool)
    for start, end in zip(runs.tolist(), [*runs[1:].tolist(), n], strict=True):
        run = nodes[start:end]
        np.logical_not(seen[run], out=keep[start:end])
        seen[run] = True
    return nodes[keep], runs


def query_words(query: str) -> list[str]:
    """Lower-cased alphanumeric words of ``query`` without stopwords."""
    return words(query, ENGLISH_STOPWORDS)


def _keyword_scores(graph: KnowledgeGraph, candidates: Ints, query: str) -> F64:
    """The reference code's rule: the whole query in the name scores highest; otherwise the number of
    distinct non-stopword query words found in the node's text; 0 drops the neighbor."""
    import pyarrow.compute as pc  # here, not at the top: only this rule needs it, and it costs ~0.1 s to import

    take = pa.array(candidates.astype(np.int64))
    names = graph.nodes.column("name").take(take).combine_chunks()
    texts = graph.nodes.column("text").take(take).combine_chunks()
    words = query_words(query)
    counts = np.zeros(len(candidates), dtype=np.float64)
    for word in dict.fromkeys(words):  # one vectorised pass per query word
        counts += pc.match_substring(texts, word, ignore_case=True).to_numpy(zero_copy_only=False)
    whole = pc.match_substring(names, query.strip(), ignore_case=True).to_numpy(zero_copy_only=False)
    return np.where(whole, len(words) + 1.0, counts)
