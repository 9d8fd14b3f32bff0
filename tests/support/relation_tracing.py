"""The relation-tracing graphs of the SeedER paper (Appendix B.1), for a correctness test of the policy.

Nodes 0..n-1 with random unit feature vectors; for each relation type r ∈ {0..k-1} a random permutation σ_r gives
the edges u -r-> σ_r(u). A query is a start node s and a relation sequence (r_1, ..., r_ℓ), ℓ ≤ 2; its answer is
σ_{r_ℓ}(... σ_{r_1}(s)). The query's feature vector is the start node's features followed by one one-hot block per
position of the sequence (all zero past its end). Dense retrieval needs embeddings of size linear in n to answer
these (Theorem B.2); a local policy only has to learn which edge type to follow at each step (Theorem B.5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ark.graph import EdgeTable, KnowledgeGraph, NodeTable, build_graph
from ark.methods.seeder.subgraph import QuerySubgraph, pack_subgraph


@dataclass
class TracingTask:
    graph: KnowledgeGraph
    features: np.ndarray  # (n, dim) unit rows
    permutations: np.ndarray  # (k, n)
    max_length: int

    def answer(self, start: int, relations: tuple[int, ...]) -> int:
        node = start
        for r in relations:
            node = int(self.permutations[r, node])
        return node

    def query_features(self, start: int, relations: tuple[int, ...]) -> np.ndarray:
        k = self.permutations.shape[0]
        blocks = np.zeros((self.max_length, k), dtype=np.float32)
        for position, r in enumerate(relations):
            blocks[position, r] = 1.0
        return np.concatenate([self.features[start], blocks.ravel()])


def make_task(n: int = 1000, k: int = 3, dim: int = 32, max_length: int = 2, seed: int = 0) -> TracingTask:
    rng = np.random.default_rng(seed)
    permutations = np.stack([rng.permutation(n) for _ in range(k)])
    features = rng.standard_normal((n, dim)).astype(np.float32)
    features /= np.linalg.norm(features, axis=1, keepdims=True)
    ids = [f"n{i}" for i in range(n)]
    src = [f"n{u}" for r in range(k) for u in range(n)]
    dst = [f"n{int(permutations[r, u])}" for r in range(k) for u in range(n)]
    rel = [f"r{r}" for r in range(k) for _ in range(n)]
    graph = build_graph(NodeTable(ids, ["node"] * n, ids, ids, source="tracing"), EdgeTable(src, dst, rel),
                        metadata={"name": "relation-tracing"})
    # build_graph numbers relation types in sorted order: r0, r1, r2 — the same as ours for k ≤ 10.
    return TracingTask(graph, features, permutations, max_length)


def sample_queries(task: TracingTask, count: int, rng: np.random.Generator, exclude: set | None = None
                   ) -> list[tuple[int, tuple[int, ...]]]:
    """Distinct (start, relations) pairs with 1 ≤ ℓ ≤ max_length, none of them in ``exclude``."""
    k, n = task.permutations.shape
    seen = set(exclude or ())
    out: list[tuple[int, tuple[int, ...]]] = []
    while len(out) < count:
        length = int(rng.integers(1, task.max_length + 1))
        query = (int(rng.integers(n)), tuple(int(r) for r in rng.integers(k, size=length)))
        if query not in seen:
            seen.add(query)
            out.append(query)
    return out


def tracing_subgraph(task: TracingTask, start: int, relations: tuple[int, ...]) -> QuerySubgraph:
    """The start node (the single seed) and its neighbourhood up to ``max_length`` hops, both directions."""
    graph = task.graph
    nodes, frontier = [start], [start]
    seen = {start}
    for _ in range(task.max_length):
        nxt = []
        for u in frontier:
            for v in graph.neighbors(u).nodes.tolist():
                if v not in seen:
                    seen.add(v)
                    nxt.append(v)
        nodes += nxt
        frontier = nxt
    nodes = np.asarray(nodes, dtype=np.int64)
    prior = np.zeros(len(nodes), dtype=np.float32)
    prior[0] = 1.0
    sims = np.zeros(len(nodes), dtype=np.float32)
    sub = pack_subgraph(graph, nodes, 1, prior, sims, np.zeros(len(graph.relation_types), np.float32),
                        task.query_features(start, relations))
    return sub.with_answers([task.answer(start, relations)], query_id=f"{start}:{relations}")
