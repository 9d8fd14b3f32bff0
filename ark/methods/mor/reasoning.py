"""MoR's Reasoning stage: structural traversal along the plan's routes, mixed with per-type text retrieval, into one
candidate pool with each candidate's structural trajectory (Lei et al. 2025, §3.2).

Each route is walked from its anchor hop by hop over the relations it allows, to nodes of the next type; a frontier
over ``max_frontier`` nodes keeps those whose text best matches the question (the paper's traversal keeps all; a
bound is ours, for hub nodes). Where the plan restricts the wanted type's text, a text retriever over nodes of that
type adds its ``text_k`` best (the paper's layer-wise textual matching); the pool is then filled to ``pool`` with
the question's best text matches among the wanted types (the paper's top-k completion). Each candidate keeps what
the Organizing stage reads (:data:`FEATURES`): text scores, which routes and anchors reached it, how many paths, the
best route's shape."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .planner import Plan, Route

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph

FEATURES = ("question_score", "question_rank", "restriction_score", "has_restriction", "by_plan_route",
            "by_merged_route", "by_schema_route", "text_only", "anchor_share", "anchors", "paths", "hops",
            "degree", "hinted_relation")


@dataclass
class Pool:
    """One question's candidates, their features (rows in :data:`FEATURES` order) and best routes' signatures."""

    nodes: list[int]
    features: np.ndarray
    signatures: list[str]
    plan: Plan
    reached: int = 0  # candidates the routes reached before the pool was cut
    routes: list[str] = field(default_factory=list)


@dataclass
class Trace:
    """How the routes reached one candidate."""

    ranks: set[int] = field(default_factory=set)
    anchors: set[int] = field(default_factory=set)
    paths: int = 0
    best: Route | None = None


def signature(trace: Trace | None) -> str:
    """The best route's signature of a candidate, or ``text`` for one only text retrieval found."""
    return trace.best.signature if trace is not None and trace.best is not None else "text"


class Reasoner:
    """Walks plans over one graph with a text index of node documents."""

    def __init__(self, graph: KnowledgeGraph, documents: Any, pool: int = 200, text_k: int = 10,
                 max_frontier: int = 1000
                 ) -> None:
        self.graph, self.documents = graph, documents
        self.pool, self.text_k, self.max_frontier = pool, text_k, max_frontier
        self.type_code = {t: i for i, t in enumerate(graph.node_types)}

    def walk(self, route: Route, question: str) -> dict[int, int]:
        """The nodes at the end of ``route`` with the number of paths reaching each."""
        frontier = {route.anchor: 1}
        codes = self.graph.node_type_codes
        for hop, allowed in enumerate(route.relations):
            wanted = {self.graph.relation_code(r) for r in allowed}
            next_type = self.type_code[route.types[hop + 1]]
            reached: dict[int, int] = {}
            for node, count in frontier.items():
                found = self.graph.neighbors(node)
                keep = np.isin(found.relations, list(wanted)) & (codes[found.nodes] == next_type)
                for other in found.nodes[keep].tolist():
                    if other != route.anchor:
                        reached[other] = reached.get(other, 0) + count
            if len(reached) > self.max_frontier:
                nodes = np.fromiter(reached, dtype=np.int64)
                best = np.argsort(-self.documents.score(question, nodes), kind="stable")[:self.max_frontier]
                reached = {int(nodes[i]): reached[int(nodes[i])] for i in best}
            frontier = reached
        return frontier

    def candidates(self, plan: Plan, question: str, mask: np.ndarray | None) -> Pool:
        """The plan's pool with features (see the module docstring)."""
        traces: dict[int, Trace] = {}
        for route in plan.routes:
            for node, paths in self.walk(route, question).items():
                trace = traces.setdefault(node, Trace())
                trace.ranks.add(route.rank)
                trace.anchors.add(route.anchor)
                trace.paths += paths
                if trace.best is None or (route.rank, len(route.relations)) < (trace.best.rank,
                                                                               len(trace.best.relations)):
                    trace.best = route
        allowed = self.graph.type_mask(plan.targets) if mask is None else mask & self.graph.type_mask(plan.targets)
        structural = np.fromiter((n for n in traces if allowed[n]), dtype=np.int64)
        scores = self.documents.score(question, structural) if len(structural) else np.zeros(0)
        order = sorted(range(len(structural)), key=lambda i: (min(traces[int(structural[i])].ranks), -scores[i]))
        nodes = [int(structural[i]) for i in order][:self.pool]
        if plan.restriction:
            nodes += [n for n, _ in self.documents.search(f"{question} {plan.restriction}", self.text_k,
                                                          node_types=plan.targets) if allowed[n]]
        nodes = list(dict.fromkeys(nodes))
        if len(nodes) < self.pool:
            fill = self.documents.search(question, self.pool + len(nodes), node_types=plan.targets)
            nodes += [n for n, _ in fill if allowed[n] and n not in set(nodes)][:self.pool - len(nodes)]
        nodes = list(dict.fromkeys(int(n) for n in nodes))
        features = self.features(nodes, traces, plan, question)
        signatures = [signature(traces.get(n)) for n in nodes]
        return Pool(nodes, features, signatures, plan, reached=len(structural),
                    routes=[r.signature for r in plan.routes])

    def features(self, nodes: list[int], traces: dict[int, Trace], plan: Plan, question: str) -> np.ndarray:
        """One row of :data:`FEATURES` per node."""
        rows = np.zeros((len(nodes), len(FEATURES)), dtype=np.float32)
        if not nodes:
            return rows
        array = np.asarray(nodes, dtype=np.int64)
        asked = self.documents.score(question, array).astype(np.float32)
        rank = np.empty(len(nodes), dtype=np.float32)
        rank[np.argsort(-asked, kind="stable")] = np.arange(1, len(nodes) + 1)
        restricted = self.documents.score(plan.restriction, array).astype(np.float32) if plan.restriction \
            else np.zeros(len(nodes), dtype=np.float32)
        anchors = max(1, len(plan.anchors))
        for i, node in enumerate(nodes):
            trace = traces.get(node) or Trace()
            best = trace.best
            rows[i] = (asked[i] / max(float(asked.max()), 1e-6), 1.0 / rank[i],
                       restricted[i] / max(float(restricted.max()), 1e-6), float(bool(plan.restriction)),
                       float(0 in trace.ranks), float(1 in trace.ranks), float(2 in trace.ranks),
                       float(not trace.ranks), len(trace.anchors) / anchors, math.log1p(len(plan.anchors)),
                       math.log1p(trace.paths), (len(best.relations) if best else 0) / 3,
                       math.log1p(self.graph.degree(node)),
                       float(best is not None and any(r in plan.hints for rs in best.relations for r in rs)))
        return rows
