"""The graph baselines of SeedER's Table 1, as the paper's Appendix E describes them (numpy; PCST needs the
``pcst-fast`` package of the ``seeder`` extra).

Every baseline starts from the same dense seeds (the top 3 nodes by cosine) and works inside their bounded
2-hop neighbourhood, scoring with the same similarities: sim(q, v) for nodes and sim(q, r) for relation names.

- :class:`KHopFilterRetriever`: K-HOP-WITH-FILTERING (Section 3), ranked seeds first, then by filter score.
- :class:`PPRRetriever`: personalised PageRank restarting at the seeds (restart 0.15, 20 iterations), blended with
  dense similarity.
- :class:`PPRMMRRetriever`: PPR's top 250 reranked by maximal marginal relevance (keep 20, λ = 0.78).
- :class:`BeamSearchRetriever`: 2-hop beam search (BeamQA-style) over transition scores.
- :class:`AStarRetriever`: best-first search with an accumulated path score plus a similarity heuristic (A*Net-style,
  not learned).
- :class:`PCSTRetriever`: G-Retriever's prize-collecting Steiner tree (node and edge prizes, ``pcst_fast``).
- :class:`SubgraphRAGRetriever`: SubgraphRAG-style triple scoring (head, relation, tail similarity).

Each is built as ``Retriever(graph, options, context)`` and answers ``retrieve(query, k) -> MethodOutput``. The paper
gives the restart, iteration, pool, keep and λ values above; the other weights (beam width, hop penalty, prize
counts, ...) are ours, named in each options model.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ark.index.topk import top_k

from ..base import MethodContext, MethodOutput, Retriever, type_mask
from .embeddings import GraphEmbeddings, open_graph_embeddings
from .expansion import Neighborhood, best_per_node, gather_rows, khop_with_filter, two_hop_neighborhood
from .options import (
    AStarOptions,
    BaselineOptions,
    BeamOptions,
    KHopFilterOptions,
    PCSTOptions,
    PPRMMROptions,
    PPROptions,
    SubgraphRAGOptions,
    TraversalOptions,
)

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph


class _Query:
    """One query's vectors, similarities and seeds, computed once and shared by the scoring code."""

    def __init__(self, embeddings: GraphEmbeddings, text: str, seeds: int) -> None:
        self.vector = embeddings.query(text)
        self.node_sims = embeddings.node_similarities(self.vector)
        self.relation_sims = embeddings.relation_similarities(self.vector)
        self.seeds = embeddings.seeds(self.node_sims, seeds)


class GraphBaseline(Retriever):
    """Shared plumbing: embeddings, seeds, the candidate-type filter and the cut to ``k``."""

    Options: ClassVar[type[BaselineOptions]] = BaselineOptions
    name: ClassVar[str] = "baseline"
    options: BaselineOptions  # each subclass narrows this to its Options

    def __init__(self, graph: KnowledgeGraph, options: BaselineOptions | None = None,
                 context: MethodContext | None = None
                 ) -> None:
        self.graph = graph
        self.options = options if options is not None else self.Options()
        if not isinstance(self.options, self.Options):
            raise TypeError(f"{type(self).__name__} takes {self.Options.__name__}, got {type(options).__name__}")
        context = context or MethodContext()
        self.embeddings = open_graph_embeddings(graph, self.options.embedder, progress=context.progress)
        self.mask = type_mask(graph, context.candidate_types)

    def retrieve(self, query: str, k: int) -> MethodOutput:
        if k <= 0 or not query.strip():
            return MethodOutput([], [])
        nodes, scores = self.rank(_Query(self.embeddings, query, self.options.seeds))
        if self.mask is not None:
            keep = self.mask[nodes]
            nodes, scores = nodes[keep], scores[keep]
        return MethodOutput([int(n) for n in nodes[:k]], [float(s) for s in scores[:k]])

    def rank(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        """All nodes this baseline returns, best first, with their scores."""
        raise NotImplementedError

    def neighborhood(self, q: _Query) -> Neighborhood:
        return two_hop_neighborhood(self.graph, q.seeds, q.node_sims, self.options.max_neighborhood)


def _sorted(nodes: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Descending by score, ties by lower node index."""
    order = np.lexsort((nodes, -scores))
    return nodes[order].astype(np.int64), scores[order].astype(np.float32)


def _seeds_first(q: _Query, nodes: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The seeds (by similarity, scored 1 + sim), then the other ``nodes`` by score."""
    seeds, seed_scores = _sorted(q.seeds, q.node_sims[q.seeds] + 1.0)
    others = ~np.isin(nodes, seeds)
    rest, rest_scores = _sorted(nodes[others], scores[others])
    return np.concatenate([seeds, rest]), np.concatenate([seed_scores, rest_scores])


# ---------------------------------------------------------------------------------------------- k-hop-with-filter
class KHopFilterRetriever(GraphBaseline):
    """K-HOP-WITH-FILTERING: seeds first, then every kept node by its filter score."""

    Options = KHopFilterOptions
    options: KHopFilterOptions  # __init__ checks the instance against Options
    name = "khop-filter"

    def rank(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        o = self.options
        return khop_with_filter(self.graph, q.node_sims, q.relation_sims, q.seeds, o.hop_budgets, o.budget).ranking()


# ---------------------------------------------------------------------------------------------- PPR and PPR+MMR
def personalized_pagerank(hood: Neighborhood, restart_weights: np.ndarray, restart: float, iterations: int
                          ) -> np.ndarray:
    """PPR on the ego graph taken as undirected (random walk over incident edges), restarting at ``restart_weights``."""
    import scipy.sparse as sp

    n = len(hood.nodes)
    rows = np.concatenate([hood.src, hood.dst])
    cols = np.concatenate([hood.dst, hood.src])
    adjacency = sp.csr_matrix((np.ones(len(rows), np.float64), (rows, cols)), shape=(n, n))
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    transition_t = (sp.diags(inverse) @ adjacency).T.tocsr()  # column-stochastic where a node has edges
    restart_weights = restart_weights / restart_weights.sum()
    scores = restart_weights.copy()
    for _ in range(iterations):
        walked = transition_t @ scores
        dangling = scores[degree == 0].sum()  # walkers on isolated nodes go back to the seeds
        scores = restart * restart_weights + (1 - restart) * (walked + dangling * restart_weights)
    return scores


class PPRRetriever(GraphBaseline):
    """Personalised PageRank from the seeds (weighted by their similarity), blended with dense similarity."""

    Options = PPROptions
    options: PPROptions  # __init__ checks the instance against Options
    name = "ppr"

    def relevance(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        """Every ego-graph node with its relevance, ppr_weight·PPR/max(PPR) + (1 − ppr_weight)·sim(q, v)."""
        o = self.options
        hood = self.neighborhood(q)
        weights = np.zeros(len(hood.nodes))
        weights[: len(q.seeds)] = np.maximum(q.node_sims[q.seeds], 0.0) + 1e-6
        ppr = personalized_pagerank(hood, weights, o.restart, o.iterations)
        ppr = ppr / ppr.max() if ppr.max() > 0 else ppr
        return hood.nodes, (o.ppr_weight * ppr + (1 - o.ppr_weight) * q.node_sims[hood.nodes]).astype(np.float32)

    def rank(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        return _sorted(*self.relevance(q))


class PPRMMRRetriever(PPRRetriever):
    """PPR's top ``pool`` reranked greedily by λ·relevance − (1 − λ)·max cosine to the nodes already chosen; the
    ``keep`` MMR picks come first, the rest of the pool follows by relevance."""

    Options = PPRMMROptions
    options: PPRMMROptions  # __init__ checks the instance against Options
    name = "ppr-mmr"

    def rank(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        o = self.options
        nodes, relevance = _sorted(*self.relevance(q))
        nodes, relevance = nodes[: o.pool], relevance[: o.pool]
        if len(nodes) == 0:
            return nodes, relevance
        spread = relevance.max() - relevance.min()
        normalised = (relevance - relevance.min()) / spread if spread > 0 else np.ones_like(relevance)
        vectors = np.asarray(self.embeddings.nodes[nodes], dtype=np.float32)
        redundancy = np.full(len(nodes), -np.inf, dtype=np.float32)
        free = np.ones(len(nodes), dtype=bool)
        picks, pick_scores = [], []
        for _ in range(min(o.keep, len(nodes))):
            value = o.mmr_lambda * normalised - (1 - o.mmr_lambda) * np.where(np.isinf(redundancy), 0.0, redundancy)
            value[~free] = -np.inf
            best = int(np.argmax(value))
            picks.append(best)
            pick_scores.append(value[best])
            free[best] = False
            redundancy = np.maximum(redundancy, vectors @ vectors[best])
        rest = np.flatnonzero(free)
        order = np.concatenate([np.asarray(picks, dtype=np.int64), rest])
        floor = min(pick_scores) - 1.0
        scores = np.concatenate([np.asarray(pick_scores, np.float32), floor + normalised[rest] - 1.0])
        return nodes[order], scores.astype(np.float32)


# ---------------------------------------------------------------------------------------------- beam and A*
def _transition(o: TraversalOptions, q: _Query, parent_scores: np.ndarray | np.float32, nodes: np.ndarray,
                relations: np.ndarray, hop: int) -> np.ndarray:
    step = o.node_weight * q.node_sims[nodes] + o.relation_weight * q.relation_sims[relations]
    return (o.path_decay * parent_scores + (1 - o.path_decay) * step - o.hop_penalty * hop).astype(np.float32)


class BeamSearchRetriever(GraphBaseline):
    """Hop by hop from the seeds, keep the ``beam_width`` best new nodes by transition score; rank everything
    reached by its best score."""

    Options = BeamOptions
    options: BeamOptions  # __init__ checks the instance against Options
    name = "beam"

    def rank(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        o = self.options
        best = np.full(self.graph.num_nodes, -np.inf, dtype=np.float32)
        best[q.seeds] = q.node_sims[q.seeds]
        frontier = q.seeds
        for hop in range(1, o.hops + 1):
            entries = gather_rows(self.graph, frontier)
            if len(entries.neighbor) == 0:
                break
            scores = _transition(o, q, best[frontier][entries.row], entries.neighbor, entries.relation, hop)
            fresh = np.isneginf(best[entries.neighbor])
            nodes, node_scores = best_per_node(entries.neighbor[fresh], scores[fresh], self.graph.num_nodes)
            frontier, kept_scores = top_k(nodes, node_scores, o.beam_width)
            best[frontier] = kept_scores
        reached = np.flatnonzero(best > -np.inf)
        return _sorted(reached, best[reached])


class AStarRetriever(GraphBaseline):
    """Best-first search: priority = path score + heuristic_weight·sim(q, v); expands up to ``max_expansions``
    states to depth ``hops``; ranks every node generated by its best path score."""

    Options = AStarOptions
    options: AStarOptions  # __init__ checks the instance against Options
    name = "astar"

    def rank(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        o = self.options
        best: dict[int, float] = {int(s): float(q.node_sims[s]) for s in q.seeds}
        heap = [(-(score + o.heuristic_weight * score), node, 0, score) for node, score in best.items()]
        heapq.heapify(heap)
        expanded: set[int] = set()
        while heap and len(expanded) < o.max_expansions:
            _, node, depth, score = heapq.heappop(heap)
            if node in expanded or score < best.get(node, -np.inf):
                continue
            expanded.add(node)
            if depth >= o.hops:
                continue
            entries = gather_rows(self.graph, np.asarray([node]))
            if len(entries.neighbor) == 0:
                continue
            scores = _transition(o, q, np.float32(score), entries.neighbor, entries.relation, depth + 1)
            targets, target_scores = best_per_node(entries.neighbor, scores, self.graph.num_nodes)
            targets, target_scores = top_k(targets, target_scores, o.branching)
            for target, value in zip(targets.tolist(), target_scores.tolist(), strict=True):
                if value > best.get(target, -np.inf):
                    best[target] = value
                    heapq.heappush(heap, (-(value + o.heuristic_weight * float(q.node_sims[target])), target,
                                          depth + 1, value))
        nodes = np.fromiter(best.keys(), dtype=np.int64, count=len(best))
        return _sorted(nodes, np.fromiter(best.values(), dtype=np.float32, count=len(best)))


# ---------------------------------------------------------------------------------------------- G-Retriever PCST
def _rank_prizes(values: np.ndarray, count: int) -> np.ndarray:
    """Prizes count, count−1, ..., 1 for the ``count`` highest values, 0 elsewhere."""
    prizes = np.zeros(len(values), dtype=np.float64)
    if count > 0 and len(values):
        top, _ = top_k(np.arange(len(values)), values.astype(np.float32), count)
        prizes[top] = np.arange(len(top), 0, -1, dtype=np.float64)
    return prizes


class PCSTRetriever(GraphBaseline):
    """G-Retriever's retrieval stage: prizes on the most query-similar nodes and edges of the ego graph, a
    prize-collecting Steiner tree by ``pcst_fast`` (GW pruning, one tree, unrooted), then every ego-graph node
    ranked by sim(q, v) plus a bonus for being in the tree (scaled by its prize)."""

    Options = PCSTOptions
    options: PCSTOptions  # __init__ checks the instance against Options
    name = "pcst"

    def __init__(self, graph: KnowledgeGraph, options: PCSTOptions | None = None, context: Any = None) -> None:
        try:
            import pcst_fast  # noqa: F401
        except ImportError as exc:
            raise ImportError("the G-Retriever (PCST) baseline needs pcst-fast: pip install ark-kg[seeder]") from exc
        super().__init__(graph, options, context)

    def rank(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        import pcst_fast

        o = self.options
        hood = self.neighborhood(q)
        n = len(hood.nodes)
        node_prizes = _rank_prizes(q.node_sims[hood.nodes], o.prized_nodes)
        edge_values = (q.node_sims[hood.nodes[hood.src]] + q.relation_sims[hood.relation] +
                       q.node_sims[hood.nodes[hood.dst]]) / 3.0
        edge_prizes = _rank_prizes(edge_values, o.prized_edges)
        # An edge whose prize is below its cost just gets cheaper; one worth more than it costs becomes a virtual
        # node carrying the surplus, joined to both endpoints by free edges (G-Retriever's construction).
        cheap = edge_prizes <= o.edge_cost
        rich = np.flatnonzero(~cheap)
        virtual = n + np.arange(len(rich))
        edges = np.concatenate([np.stack([hood.src[cheap], hood.dst[cheap]], 1),
                                np.stack([hood.src[rich], virtual], 1), np.stack([virtual, hood.dst[rich]], 1)])
        costs = np.concatenate([o.edge_cost - edge_prizes[cheap], np.zeros(2 * len(rich))])
        prizes = np.concatenate([node_prizes, edge_prizes[rich] - o.edge_cost])
        if len(edges) == 0:
            return _sorted(hood.nodes, q.node_sims[hood.nodes])
        chosen, _ = pcst_fast.pcst_fast(edges.astype(np.int64), prizes, costs.astype(np.float64), -1, 1, "gw", 0)
        in_tree = np.zeros(n, dtype=bool)
        in_tree[chosen[chosen < n]] = True
        top_prize = node_prizes.max() if node_prizes.max() > 0 else 1.0
        bonus = np.where(in_tree, o.prize_bonus * (1.0 + node_prizes / top_prize), 0.0)
        return _sorted(hood.nodes, (q.node_sims[hood.nodes] + bonus).astype(np.float32))


# ---------------------------------------------------------------------------------------------- SubgraphRAG
class SubgraphRAGRetriever(GraphBaseline):
    """Score every triple (h, r, t) of the ego graph by weighted head, relation and tail similarity; return the
    seeds, then the endpoints of the best ``triples`` triples by their best triple score."""

    Options = SubgraphRAGOptions
    options: SubgraphRAGOptions  # __init__ checks the instance against Options
    name = "subgraphrag"

    def rank(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        o = self.options
        hood = self.neighborhood(q)
        heads, tails = hood.nodes[hood.src], hood.nodes[hood.dst]
        scores = (o.head_weight * q.node_sims[heads] + o.relation_weight * q.relation_sims[hood.relation] +
                  o.tail_weight * q.node_sims[tails]).astype(np.float32)
        top, top_scores = top_k(np.arange(len(scores)), scores, o.triples)
        ends = np.concatenate([heads[top], tails[top]])
        nodes, node_scores = best_per_node(ends, np.concatenate([top_scores, top_scores]), self.graph.num_nodes)
        return _seeds_first(q, nodes, node_scores)


BASELINES: dict[str, type[GraphBaseline]] = {
    cls.name: cls for cls in (KHopFilterRetriever, PPRRetriever, PPRMMRRetriever, BeamSearchRetriever,
                              AStarRetriever, PCSTRetriever, SubgraphRAGRetriever)
}


def make_baseline(name: str, graph: KnowledgeGraph, options: dict[str, Any] | BaselineOptions | None = None,
                  context: Any = None) -> GraphBaseline:
    """Build the Table 1 baseline ``name`` with options given as a model or a dict (checked: unknown keys are
    rejected with the valid ones listed)."""
    if name not in BASELINES:
        raise ValueError(f"unknown graph baseline {name!r}; valid: {', '.join(BASELINES)}")
    cls = BASELINES[name]
    if options is None or isinstance(options, dict):
        options = cls.Options(**(options or {}))
    return cls(graph, options, context)


def baseline_names() -> Sequence[str]:
    return tuple(BASELINES)
