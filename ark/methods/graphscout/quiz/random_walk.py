"""The random-walk quizzer of GraphScout's ablation (Table 2, "rw Graph Quizzer"), made deterministic: no sampled
objective; a random walk from the seed, turned into a question by a fixed template.

The paper's variant samples subgraphs by random walks and asks an LLM for question-answer pairs without
interactive exploration. Ours is **a deterministic template over a random walk**: walk 1-4 hops from the seed (a
node type uniformly, then a node), each hop a relation the current node has, then a neighbour along it; ask
about the walk's end set (every node the same relation chain reaches from the seed, computed exactly): a quarter
of the walks become a membership question (is the walk's last node, or half of the time some other node of its
type, reached?), the rest ask for the one node (one reached), the set (2 to ``max_set``) or the count (more). The
question type follows from what the walk found, not from an objective, so the mix is whatever walks produce.
Records are labelled ``"quizzer": "random-walk"``; pattern and difficulty are read off the walk afterwards.
"""

from __future__ import annotations

import numpy as np

from ....graph import KnowledgeGraph
from ....quiz.traverse import FrontierTooLarge
from .builder import Built, SchemaMoves
from .evaluate import Evaluator
from .generate import Episode, SeedPool
from .objective import Objective, difficulty_of
from .program import Anchor, Expr, Program, Walk

MAX_WALK = 4
MEMBERSHIP_SHARE = 0.25


class RandomWalkQuizzer:
    """See the module docstring."""

    def __init__(self, graph: KnowledgeGraph, evaluator: Evaluator, nameable: np.ndarray, max_set: int) -> None:
        self.graph = graph
        self.evaluator = evaluator
        self.nameable = nameable
        self.max_set = max_set
        self.moves = SchemaMoves(graph)

    def episode(self, pool: SeedPool, split: str, rng: np.random.Generator) -> Episode:
        placeholder = Objective("", "", "", (), 0)
        seed = pool.draw(split, rng)
        if seed is None:
            return Episode(None, placeholder, 1, exhausted=True)
        built = self._walk_question(seed, rng)
        if built is None:
            return Episode(None, placeholder, 1)
        program = built.program
        pattern = "<h,r,t>" if program.ask == "contains" else "<h,r,*>"
        objective = Objective(program.answer_type, pattern, difficulty_of(program), (pattern,), program.hops)
        return Episode(built, objective, 1)

    def _walk_question(self, seed: int, rng: np.random.Generator) -> Built | None:
        g = self.graph
        expr: Expr = Anchor(g.node_id(seed), g.node_type(seed))
        node = seed
        for _ in range(int(rng.integers(1, MAX_WALK + 1))):
            options = self.moves.available(node, named=True)
            if not options:
                return None
            move = options[int(rng.integers(len(options)))]
            reached = self.moves.neighbors(node, move)
            node = int(reached[int(rng.integers(len(reached)))])
            expr = Walk(expr, move.relation, move.direction, move.node_type)
        try:
            answers = self.evaluator.answers(Program(expr, "count"))
        except FrontierTooLarge:  # too broad to ask about
            return None
        if rng.random() < MEMBERSHIP_SHARE:
            candidate = self._candidate(expr, node, seed, answers, bool(rng.random() < 0.5), rng)
            if candidate is None:
                return None
            program = Program(expr, "contains", g.node_id(candidate))
        elif len(answers) == 1 and self.nameable[int(answers[0])]:
            program = Program(expr, "the_one")
        elif 2 <= len(answers) <= self.max_set:
            program = Program(expr, "list")
        elif len(answers) > self.max_set:
            program = Program(expr, "count")
        else:
            return None
        values = self.evaluator.values(program)
        return Built(program, self.evaluator.answers(program, values), values)

    def _candidate(self, expr: Expr, end: int, seed: int, answers: np.ndarray, truth: bool,
                   rng: np.random.Generator) -> int | None:
        if truth:
            return end if end != seed and self.nameable[end] and np.isin(end, answers) else None
        code = self.graph.node_types.index(expr.node_type)
        pool = np.flatnonzero(self.nameable & (self.graph.node_type_codes == code))
        for _ in range(40):
            node = int(pool[int(rng.integers(len(pool)))])
            if node != seed and not np.isin(node, answers):
                return node
        return None
