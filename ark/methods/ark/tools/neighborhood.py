"""Neighbors(v, q, F): the filtered one-hop neighborhood of a node, ranked, computed with array operations.

Everything over the whole neighborhood is vectorised (numpy / pyarrow compute) so hub nodes with thousands of
neighbors cost milliseconds; Python loops only touch the few neighbors that are shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ark.graph import KnowledgeGraph
from ark.text import ENGLISH_STOPWORDS, words


@dataclass
class RankedNeighborhood:
    """The ranked unique neighbors (all of them, best first) and how many matched the query."""

    nodes: np.ndarray
    total: int
    matching: int | None
    relation_nodes: np.ndarray  # the filtered edge arrays, kept to describe the shown neighbors' relations
    relation_codes: np.ndarray
    relation_outgoing: np.ndarray

    def relations_of(self, node: int) -> tuple[list[int], list[int]]:
        """Relation codes of the edges centre→node and node→centre, in row order."""
        sel = self.relation_nodes == node
        codes, outgoing = self.relation_codes[sel], self.relation_outgoing[sel]
        return list(dict.fromkeys(codes[outgoing].tolist())), list(dict.fromkeys(codes[~outgoing].tolist()))


def filtered_neighborhood(graph: KnowledgeGraph, node: int, relations: list[str] | None,
                          type_codes: list[int] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def rank_neighborhood(graph: KnowledgeGraph, index, nodes: np.ndarray, codes: np.ndarray, outgoing: np.ndarray,
                      query: str | None, ranking: str) -> RankedNeighborhood:
    """Rank the unique neighbors: BM25 of ``query`` (default) or the reference keyword rule; no query keeps
    row order, i.e. by relation, then direction (outgoing first), then node index. Ties keep that order too."""
    unique, first = np.unique(nodes, return_index=True)
    order = np.argsort(first, kind="stable")
    unique, first = unique[order], first[order]  # row order: relation, direction, neighbor index
    matching: int | None = None
    if query and len(unique):
        if ranking == "keyword":
            keyword_scores = _keyword_scores(graph, unique, query)
            keep = keyword_scores > 0
            unique, scores = unique[keep], keyword_scores[keep]
            matching = int(len(unique))
        else:
            scores = np.asarray(index.score(query, unique.astype(np.int64)), dtype=np.float64)
            matching = int(np.count_nonzero(scores > 0))
        unique = unique[np.argsort(-scores, kind="stable")]
    return RankedNeighborhood(unique, len(unique), matching, nodes, codes, outgoing)


def query_words(query: str) -> list[str]:
    """Lower-cased alphanumeric words of ``query`` without stopwords."""
    return words(query, ENGLISH_STOPWORDS)


def _keyword_scores(graph: KnowledgeGraph, candidates: np.ndarray, query: str) -> np.ndarray:
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
