"""Exact answers of a :class:`~ark.methods.graphscout.quiz.program.Program` by walking the graph in memory (numpy
over the CSR arrays), and the nodes that support them (the clue candidates).

Independent of any database: :mod:`ark.methods.graphscout.quiz.cypher` recomputes the same answers in Cypher.
"""

from __future__ import annotations

import numpy as np

from ....graph import KnowledgeGraph
from ....graph.csr import row_positions
from ....graph.store import Direction as GraphDirection
from ....quiz.traverse import EMPTY, SMALL_FRONTIER, FrontierTooLarge
from .program import Anchor, Expr, Meet, Program, Walk

DEFAULT_FRONTIER_LIMIT = 2000


def step(graph: KnowledgeGraph, nodes: np.ndarray, relation: str | None, direction: str, node_type: str,
         limit: int | None = None) -> np.ndarray:
    """Sorted distinct ``node_type`` nodes one hop from any of ``nodes``: along ``relation`` in ``direction``
    ("out": along the edge, "in": against it), or along any relation either way when ``relation`` is None.
    More than ``limit`` nodes raise ``FrontierTooLarge``."""
    nodes = np.asarray(nodes, dtype=np.int64)
    if relation is None:
        found = _row_entries(graph, nodes, None)
    elif len(nodes) <= SMALL_FRONTIER:
        code = graph.relation_code(relation)
        way: GraphDirection = "in" if direction == "in" else "out"  # a named relation is walked "out" or "in"
        parts = [np.asarray(graph.neighbors(int(i), code, way).nodes) for i in nodes]
        found = np.concatenate(parts) if parts else EMPTY
    else:
        found = _row_entries(graph, nodes, 2 * graph.relation_code(relation) + (direction == "in"))
    found = found[graph.node_type_codes[found] == graph.node_types.index(node_type)]
    if len(found) > 64:
        # A mark per node beats sorting when many neighbours repeat (hubs reached from many nodes).
        marks = np.zeros(graph.num_nodes, dtype=bool)
        marks[found] = True
        reached = np.flatnonzero(marks).astype(np.int32)
    else:
        reached = np.unique(found).astype(np.int32)
    if limit is not None and len(reached) > limit:
        raise FrontierTooLarge(len(reached))
    return reached


def follow_any(graph: KnowledgeGraph, nodes: np.ndarray, node_type: str, limit: int | None = None) -> np.ndarray:
    """Sorted distinct ``node_type`` nodes one edge (any relation, either direction) away from any of ``nodes``."""
    return step(graph, nodes, None, "any", node_type, limit)


def _row_entries(graph: KnowledgeGraph, nodes: np.ndarray, packed_code: int | None) -> np.ndarray:
    """Neighbours in the CSR rows of ``nodes`` (only entries of one packed (relation, direction) code if given).

    One gather over all the rows for the same reason as ``ark.quiz.traverse._gather``: one ``neighbors`` call per
    node costs microseconds of Python and a frontier may hold thousands of nodes; the tests check it against plain
    sets.
    """
    if len(nodes) == 0:
        return EMPTY
    positions, _ = row_positions(graph.indptr, nodes)
    if packed_code is not None:
        positions = positions[np.asarray(graph.code_array)[positions] == packed_code]
    return np.asarray(graph.neighbor_array)[positions]


class Evaluator:
    """Evaluates programs on one graph; any intermediate set above ``limit`` nodes raises ``FrontierTooLarge``."""

    def __init__(self, graph: KnowledgeGraph, limit: int | None = DEFAULT_FRONTIER_LIMIT) -> None:
        self.graph = graph
        self.limit = limit

    def values(self, program: Program) -> dict[int, np.ndarray]:
        """The node set of every sub-expression, keyed by ``id(expr)``."""
        anchors = np.asarray(sorted(self.graph.index_of(a) for a in program.anchor_ids), np.int32)
        out: dict[int, np.ndarray] = {}
        self._value(program.target, anchors, out)
        return out

    def _value(self, expr: Expr, anchors: np.ndarray, out: dict[int, np.ndarray]) -> np.ndarray:
        g = self.graph
        if isinstance(expr, Anchor):
            index = g.index_of(expr.node_id)
            if g.node_type(index) != expr.node_type:
                raise ValueError(f"anchor {expr.node_id!r} is a {g.node_type(index)!r} node, not {expr.node_type!r}")
            found = np.asarray([index], np.int32)
        elif isinstance(expr, Walk):
            source = self._value(expr.source, anchors, out)
            found = step(g, source, expr.relation, expr.direction, expr.node_type, self.limit)
        else:
            left, right = self._value(expr.left, anchors, out), self._value(expr.right, anchors, out)
            found = np.setdiff1d(np.intersect1d(left, right), anchors).astype(np.int32)
        out[id(expr)] = found
        return found

    def answers(self, program: Program, values: dict[int, np.ndarray] | None = None) -> np.ndarray:
        """The target's nodes other than the anchors (sorted node indices)."""
        values = values if values is not None else self.values(program)
        anchors = np.asarray([self.graph.index_of(a) for a in program.anchor_ids], np.int32)
        return np.setdiff1d(values[id(program.target)], anchors).astype(np.int32)

    def support(self, program: Program, kept: np.ndarray, values: dict[int, np.ndarray] | None = None) -> np.ndarray:
        """Non-anchor nodes lying on some path from the anchors to a node of ``kept`` (sorted)."""
        values = values if values is not None else self.values(program)
        found: list[np.ndarray] = []
        self._support(program.target, np.asarray(kept, np.int32), values, found)
        anchors = np.asarray([self.graph.index_of(a) for a in program.anchor_ids], np.int32)
        joined = np.unique(np.concatenate(found)) if found else EMPTY
        return np.setdiff1d(joined, anchors).astype(np.int32)

    def _support(self, expr: Expr, kept: np.ndarray, values: dict[int, np.ndarray], found: list[np.ndarray]) -> None:
        if isinstance(expr, Anchor) or len(kept) == 0:
            return
        if isinstance(expr, Meet):
            self._support(expr.left, kept, values, found)
            self._support(expr.right, kept, values, found)
            return
        relation, direction, source_type = expr.reversed_from(_type(expr.source))
        back = step(self.graph, kept, relation, direction, source_type)
        previous = np.intersect1d(values[id(expr.source)], back).astype(np.int32)
        found.append(previous)
        self._support(expr.source, previous, values, found)


def _type(expr: Expr) -> str:
    return expr.node_type
