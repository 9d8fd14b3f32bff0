"""The query subgraph SeedER's policy explores (Algorithm 1, line 3), as plain numpy arrays.

:func:`query_subgraph` runs the dense seeding and K-HOP-WITH-FILTERING for one query and packs the result: the
subgraph's nodes (seeds first), each node's prior (its filter score, which ranks frontier candidates when a step
has more than cap_t of them), and its edges in both directions as messages with a direction-aware relation code.
Everything the policy needs later is here, so training never touches the full graph again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .embeddings import GraphEmbeddings, NodeFeatures
from .expansion import Expansion, induced_edges, khop_with_filter


@dataclass
class QuerySubgraph:
    """One query's bounded search space.

    ``edge_src → edge_dst`` are messages in local indices; ``edge_code = 2·relation + incoming`` as seen from
    ``edge_dst``. ``answers`` are local positions of gold nodes inside the subgraph and ``num_answers`` counts all
    gold nodes (some may lie outside), so Recall@Any over the subgraph is ``len(answers) / num_answers``.
    """

    nodes: np.ndarray  # (S,) int64 global node indices; the first num_seeds are the seeds
    num_seeds: int
    prior: np.ndarray  # (S,) float32, higher = expanded earlier by the filter (seeds highest)
    node_sims: np.ndarray  # (S,) float32 sim(q, v)
    edge_src: np.ndarray  # (E,) int64
    edge_dst: np.ndarray  # (E,) int64
    edge_code: np.ndarray  # (E,) int64
    edge_sims: np.ndarray  # (E,) float32 sim(q, r) of the edge's relation
    query_features: np.ndarray  # (F,) float32, the query in node-feature space
    answers: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    num_answers: int = 0
    gold: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # all gold nodes, global
    query_id: str = ""

    @property
    def size(self) -> int:
        return len(self.nodes)

    def with_answers(self, answer_nodes: Sequence[int], query_id: str = "") -> QuerySubgraph:
        """Record the gold nodes (global indices) and the query id; returns ``self``."""
        gold = np.asarray(sorted(set(int(a) for a in answer_nodes)), dtype=np.int64)
        self.answers = np.flatnonzero(np.isin(self.nodes, gold))
        self.num_answers, self.gold, self.query_id = len(gold), gold, query_id
        return self


def pack_subgraph(graph, nodes: np.ndarray, num_seeds: int, prior: np.ndarray, node_sims: np.ndarray,
                  relation_sims: np.ndarray, query_features: np.ndarray) -> QuerySubgraph:
    """A :class:`QuerySubgraph` over ``nodes`` (seeds first) with every edge among them."""
    src, dst, codes = induced_edges(graph, nodes)
    return QuerySubgraph(
        nodes=np.asarray(nodes, dtype=np.int64), num_seeds=int(num_seeds), prior=np.asarray(prior, np.float32),
        node_sims=np.asarray(node_sims, np.float32), edge_src=src, edge_dst=dst, edge_code=codes,
        edge_sims=np.asarray(relation_sims[codes >> 1], np.float32) if len(codes) else np.zeros(0, np.float32),
        query_features=np.asarray(query_features, np.float32))


def expansion_prior(expansion: Expansion) -> np.ndarray:
    """A node's rank key for capping candidates: seeds first, then earlier hops, then higher filter score."""
    return np.where(expansion.hops == 0, 2.0 + expansion.scores, expansion.scores - expansion.hops).astype(np.float32)


def query_subgraph(graph, embeddings: GraphEmbeddings, features: NodeFeatures, query_vector: np.ndarray,
                   num_seeds: int, hop_budgets: Sequence[int], budget: int) -> tuple[QuerySubgraph, Expansion]:
    """Seeds (top ``num_seeds`` by cosine), then K-HOP-WITH-FILTERING up to ``budget`` nodes, packed."""
    node_sims = embeddings.node_similarities(query_vector)
    relation_sims = embeddings.relation_similarities(query_vector)
    seeds = embeddings.seeds(node_sims, num_seeds)
    expansion = khop_with_filter(graph, node_sims, relation_sims, seeds, hop_budgets, budget)
    subgraph = pack_subgraph(graph, expansion.nodes, len(seeds), expansion_prior(expansion),
                             node_sims[expansion.nodes], relation_sims, features.query(query_vector))
    return subgraph, expansion
