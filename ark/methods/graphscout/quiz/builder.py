"""Realising an objective from a seed node: walk the real graph from the seed, hop by hop, choosing among the
moves the schema allows and the current nodes actually have, so every question is about something that exists.

- ``<h,r,*>`` / ``<h,_,_>``: a chain of named / wildcard hops from the current expression;
- ``<h,r,t>`` / ``<h,*,t>``: a meet: ``a`` hops from the current expression to a meeting type, then a random walk
  of ``b`` hops on from one of the reached nodes to a new named anchor ``t``; the question asks about the nodes
  that link both. As a boolean's last part: a chain of hops and a candidate ``t`` (reached or not) to test;
- a boolean ``exists`` that must be false ends with a hop none of the frontier's nodes has.

The builder returns ``None`` when a random choice leads nowhere; the generator then tries again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....graph import KnowledgeGraph
from ....quiz.traverse import FrontierTooLarge
from .evaluate import Evaluator, step
from .objective import MAX_SET, MEET_PATTERNS, NAMED_PATTERNS, Objective, fits, part_min_hops
from .program import Anchor, Ask, Direction, Expr, Meet, Program, Walk

ASK_OF: dict[str, Ask] = {"set": "list", "entity": "the_one", "number": "count"}
MIN_COUNT = 2


@dataclass(frozen=True)
class Move:
    """A hop the schema allows from some node type: a relation and direction (or any: ``None``, "any")."""

    relation: str | None
    direction: Direction
    node_type: str

    def reverse(self, source_type: str) -> Move:
        if self.relation is None:
            return Move(None, "any", source_type)
        return Move(self.relation, "in" if self.direction == "out" else "out", source_type)


class SchemaMoves:
    """The named and wildcard moves from each node type (schema triples with edges), and per-node checks."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph
        self.named: dict[str, list[Move]] = {t: [] for t in graph.node_types}
        wild: dict[str, dict[str, None]] = {t: {} for t in graph.node_types}
        for triple in graph.schema:
            if triple.count == 0:
                continue
            self.named[triple.source_type].append(Move(triple.relation, "out", triple.target_type))
            self.named[triple.target_type].append(Move(triple.relation, "in", triple.source_type))
            wild[triple.source_type].setdefault(triple.target_type, None)
            wild[triple.target_type].setdefault(triple.source_type, None)
        self.wildcard = {t: [Move(None, "any", u) for u in targets] for t, targets in wild.items()}
        self.codes = {t: k for k, t in enumerate(graph.node_types)}

    def moves(self, node_type: str, named: bool) -> list[Move]:
        return self.named[node_type] if named else self.wildcard[node_type]

    def neighbors(self, node: int, move: Move) -> np.ndarray:
        """The ``move.node_type`` neighbors of ``node`` along ``move``."""
        g = self.graph
        if move.relation is None or move.direction == "any":  # a wildcard move (the two go together)
            found = np.asarray(g.neighbors(node).nodes)
        else:
            found = np.asarray(g.neighbors(node, move.relation, move.direction).nodes)
        return found[g.node_type_codes[found] == self.codes[move.node_type]]

    def available(self, node: int, named: bool, relation: str | None = None) -> list[Move]:
        """Moves ``node`` actually has (optionally only along ``relation``)."""
        options = self.moves(self.graph.node_type(node), named)
        if relation is not None:
            options = [m for m in options if m.relation == relation]
        return [m for m in options if len(self.neighbors(node, m))]


@dataclass
class Built:
    """A realised program with its exact answers (sorted node indices) and the evaluator's values."""

    program: Program
    answers: np.ndarray
    values: dict[int, np.ndarray]


class ProgramBuilder:
    """Builds programs for objectives (see the module docstring)."""

    def __init__(self, graph: KnowledgeGraph, evaluator: Evaluator, nameable: np.ndarray,
                 moves: SchemaMoves | None = None, max_set: int = MAX_SET) -> None:
        self.graph = graph
        self.evaluator = evaluator
        self.nameable = nameable
        self.moves = moves or SchemaMoves(graph)
        self.max_set = max_set
        self._nameable_by_type = {t: np.flatnonzero(nameable & (graph.node_type_codes == k)).astype(np.int32)
                                  for k, t in enumerate(graph.node_types)}

    # ------------------------------------------------------------------ entry point
    def build(self, objective: Objective, seed: int, rng: np.random.Generator, truth: bool = True) -> Built | None:
        """A program meeting ``objective`` from node ``seed`` (a boolean answers ``truth``), or None."""
        try:
            return self._build(objective, seed, rng, truth)
        except FrontierTooLarge:
            return None

    def _build(self, objective: Objective, seed: int, rng: np.random.Generator, truth: bool) -> Built | None:
        g = self.graph
        parts = objective.parts
        boolean = objective.answer_type == "boolean"
        contains = boolean and parts[-1] in MEET_PATTERNS
        split = self._split_hops(objective.hops, parts, contains, rng)
        if split is None:
            return None
        lock = objective.difficulty == "simple"
        anchors = {seed}
        expr: Expr = Anchor(g.node_id(seed), g.node_type(seed))
        frontier = np.asarray([seed], np.int32)
        candidate: str | None = None
        for k, (part, hops) in enumerate(zip(parts, split, strict=True)):
            named = part in NAMED_PATTERNS
            last = k == len(parts) - 1
            relation = _first_relation(expr) if lock else None
            if part in MEET_PATTERNS and not (last and contains):
                made = self._meet(expr, frontier, hops, named, relation, anchors, rng, lock)
            else:
                empty_end = last and boolean and not contains and not truth
                made = self._chain(expr, frontier, hops, named, relation, rng, lock, empty_end)
            if made is None:
                return None
            expr, frontier = made
        if contains:
            candidate = self._candidate(expr, frontier, anchors, truth, rng)
            if candidate is None:
                return None
        ask: Ask = ("contains" if contains else "exists") if boolean else ASK_OF[objective.answer_type]
        program = Program(expr, ask, candidate)
        if not fits(program, objective.difficulty):
            return None
        values = self.evaluator.values(program)
        answers = self.evaluator.answers(program, values)
        if not self._acceptable(program, answers, truth):
            return None
        return Built(program, answers, values)

    # ------------------------------------------------------------------ parts
    def _split_hops(self, total: int, parts: tuple[str, ...], contains: bool,
                    rng: np.random.Generator) -> list[int] | None:
        lows = [part_min_hops(p, contains and k == len(parts) - 1) for k, p in enumerate(parts)]
        spare = total - sum(lows)
        if spare < 0:
            return None
        split = list(lows)
        for _ in range(spare):
            split[int(rng.integers(len(split)))] += 1
        return split

    def _chain(self, expr: Expr, frontier: np.ndarray, hops: int, named: bool, relation: str | None,
               rng: np.random.Generator, lock: bool, empty_end: bool = False) -> tuple[Expr, np.ndarray] | None:
        """``hops`` hops from ``expr``, each a move that some node of the current frontier has (the last one a move
        none has, when ``empty_end``)."""
        for k in range(hops):
            if len(frontier) == 0:
                return None
            if empty_end and k == hops - 1:
                return self._empty_hop(expr, frontier, named, relation, rng)
            node = int(frontier[int(rng.integers(len(frontier)))])
            options = self.moves.available(node, named, relation)
            if not options:
                return None
            move = options[int(rng.integers(len(options)))]
            if lock and relation is None:
                relation = move.relation
            frontier = step(self.graph, frontier, move.relation, move.direction, move.node_type,
                            self.evaluator.limit)
            expr = Walk(expr, move.relation, move.direction, move.node_type)
        return expr, frontier

    def _empty_hop(self, expr: Expr, frontier: np.ndarray, named: bool, relation: str | None,
                   rng: np.random.Generator) -> tuple[Expr, np.ndarray] | None:
        options = [m for m in self.moves.moves(expr.node_type, named) if relation is None or m.relation == relation]
        order = rng.permutation(len(options)).tolist()
        for k in order:
            move = options[k]
            reached = step(self.graph, frontier, move.relation, move.direction, move.node_type, self.evaluator.limit)
            if len(reached) == 0:
                return Walk(expr, move.relation, move.direction, move.node_type), reached
        return None

    def _meet(self, expr: Expr, frontier: np.ndarray, hops: int, named: bool, relation: str | None,
              anchors: set[int], rng: np.random.Generator, lock: bool) -> tuple[Expr, np.ndarray] | None:
        """``a`` hops from ``expr`` to a meeting type, then ``b`` hops on from one reached node to a new anchor."""
        a = int(rng.integers(1, hops))
        made = self._chain(expr, frontier, a, named, relation, rng, lock)
        if made is None:
            return None
        left, reached = made
        if lock and relation is None:
            relation = _first_relation(left)
        pool = np.setdiff1d(reached, np.asarray(sorted(anchors), np.int32))
        if len(pool) == 0:
            return None
        node = int(pool[int(rng.integers(len(pool)))])
        path: list[tuple[Move, int]] = []  # (move taken, node it left from)
        for _ in range(hops - a):
            options = self.moves.available(node, named, relation)
            if not options:
                return None
            move = options[int(rng.integers(len(options)))]
            path.append((move, node))
            found = self.moves.neighbors(node, move)
            node = int(found[int(rng.integers(len(found)))])
        if not self.nameable[node] or node in anchors:
            return None
        anchors.add(node)
        right: Expr = Anchor(self.graph.node_id(node), self.graph.node_type(node))
        for move, left_node in reversed(path):
            back = move.reverse(self.graph.node_type(left_node))
            right = Walk(right, back.relation, back.direction, back.node_type)
        meet = Meet(left, right)
        program = Program(meet, "list")
        values = self.evaluator.values(program)
        return meet, values[id(meet)]

    def _candidate(self, expr: Expr, frontier: np.ndarray, anchors: set[int], truth: bool,
                   rng: np.random.Generator) -> str | None:
        """A named node to test: one of the frontier (``truth``) or one of its type outside it that has the last
        hop's relation at all (so the question is not trivially false)."""
        blocked = np.asarray(sorted(anchors), np.int32)
        if truth:
            pool = np.setdiff1d(frontier, blocked)
            pool = pool[self.nameable[pool]]
            return self.graph.node_id(int(pool[int(rng.integers(len(pool)))])) if len(pool) else None
        pool = self._nameable_by_type[expr.node_type]
        if not isinstance(expr, Walk) or len(pool) == 0:
            return None
        back = Move(expr.relation, expr.direction, expr.node_type).reverse(expr.source.node_type)
        for _ in range(40):
            node = int(pool[int(rng.integers(len(pool)))])
            if node in anchors or np.isin(node, frontier):
                continue
            if len(self.moves.neighbors(node, back)):
                return self.graph.node_id(node)
        return None

    def _acceptable(self, program: Program, answers: np.ndarray, truth: bool) -> bool:
        if program.ask == "list":
            return 2 <= len(answers) <= self.max_set and all(self.graph.name(int(i)) for i in answers)
        if program.ask == "the_one":
            return len(answers) == 1 and bool(self.nameable[int(answers[0])])
        if program.ask == "count":  # 2 or more: a count of 1 is what a solver guesses when it finds anything
            return len(answers) >= MIN_COUNT
        if program.ask == "exists":
            return (len(answers) > 0) == truth
        assert program.candidate is not None  # Program's own check: a 'contains' question names its candidate
        index = self.graph.index_of(program.candidate)
        return bool(np.isin(index, answers)) == truth


def _first_relation(expr: Expr) -> str | None:
    """The relation of the first named hop in ``expr`` (what a simple question is locked to), if any."""
    if isinstance(expr, Anchor):
        return None
    if isinstance(expr, Walk):
        return _first_relation(expr.source) or expr.relation
    return _first_relation(expr.left) or _first_relation(expr.right)
