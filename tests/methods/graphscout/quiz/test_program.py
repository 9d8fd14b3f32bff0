"""Question programs: JSON round trip, structure statistics, refusal of malformed programs; exact evaluation
against an oracle of plain Python sets built from ``graph.edges()`` (no code shared with the evaluator)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from ark.methods.graphscout.quiz.evaluate import Evaluator, step
from ark.methods.graphscout.quiz.program import Anchor, Meet, Program, Walk
from ark.quiz.traverse import FrontierTooLarge


class SetOracle:
    """Neighbours from the edge list with Python sets."""

    def __init__(self, graph):
        self.graph = graph
        src, dst, rel = graph.edges()
        self.out, self.into, self.any = defaultdict(set), defaultdict(set), defaultdict(set)
        for s, d, r in zip(src.tolist(), dst.tolist(), rel.tolist(), strict=True):
            name = graph.relation_types[r]
            self.out[(s, name)].add(d)
            self.into[(d, name)].add(s)
            self.any[s].add(d)
            self.any[d].add(s)

    def hop(self, nodes, relation, direction, node_type):
        found = set()
        for n in nodes:
            if relation is None:
                found |= self.any[n]
            else:
                found |= (self.out if direction == "out" else self.into)[(n, relation)]
        return {n for n in found if self.graph.node_type(n) == node_type}

    def value(self, expr, anchors):
        if isinstance(expr, Anchor):
            return {self.graph.index_of(expr.node_id)}
        if isinstance(expr, Walk):
            return self.hop(self.value(expr.source, anchors), expr.relation, expr.direction, expr.node_type)
        return (self.value(expr.left, anchors) & self.value(expr.right, anchors)) - anchors

    def answers(self, program):
        anchors = {self.graph.index_of(a) for a in program.anchor_ids}
        return self.value(program.target, anchors) - anchors


def film_program(kind: str) -> Program:
    genre_of_films_of = Walk(Walk(Anchor("P1", "person"), "acted_in", "out", "film"), "has_genre", "out", "genre")
    if kind == "chain":
        return Program(genre_of_films_of, "list")
    if kind == "meet":
        other = Walk(Anchor("S1", "studio"), "produced_by", "in", "film")
        return Program(Meet(Walk(Anchor("G2", "genre"), "has_genre", "in", "film"), other), "count")
    if kind == "wild":
        return Program(Walk(Walk(Anchor("F3", "film"), None, "any", "person"), None, "any", "film"), "exists")
    return Program(Walk(Meet(Walk(Anchor("P2", "person"), None, "any", "film"),
                             Walk(Anchor("G1", "genre"), "has_genre", "in", "film")), "directed", "in", "person"),
                   "contains", "P5")


@pytest.mark.parametrize("kind", ["chain", "meet", "wild", "hybrid"])
def test_json_round_trip_and_statistics(kind):
    program = film_program(kind)
    again = Program.from_dict(program.to_dict())
    assert again == program and again.to_dict() == program.to_dict()
    assert program.anchor_ids[0] in ("P1", "G2", "F3", "P2")
    if kind == "hybrid":
        assert program.hops == 3 and program.relations == ["*", "has_genre", "directed"]
        assert program.node_types == ["person", "film", "genre"] and program.answer_type == "boolean"


def test_malformed_programs_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="direction 'any'"):
        Walk(Anchor("P1", "person"), None, "out", "film")
    with pytest.raises(ValueError, match="one node type"):
        Meet(Anchor("P1", "person"), Anchor("F1", "film"))
    with pytest.raises(ValueError, match="candidate"):
        Program(Anchor("P1", "person"), "contains")
    with pytest.raises(ValueError, match="unknown ask"):
        Program(Anchor("P1", "person"), "guess")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="malformed"):
        Program.from_dict({"ask": "list", "target": {"walk": {"anchor": "P1"}}})


@pytest.mark.parametrize("kind", ["chain", "meet", "wild", "hybrid"])
def test_evaluation_matches_plain_sets(film_graph, kind):
    program = film_program(kind)
    got = Evaluator(film_graph).answers(program)
    assert set(got.tolist()) == SetOracle(film_graph).answers(program)
    assert np.all(np.diff(got) > 0)  # sorted, distinct


def test_every_hop_matches_plain_sets_for_small_and_large_frontiers(clinical_graph, film_graph):
    for graph in (clinical_graph, film_graph):
        oracle = SetOracle(graph)
        rng = np.random.default_rng(0)
        for size in (1, 5, 24):  # the per-node path and the vectorised gather
            nodes = rng.choice(graph.num_nodes, size=size, replace=False)
            for triple in graph.schema:
                for relation, direction, node_type in ((triple.relation, "out", triple.target_type),
                                                       (triple.relation, "in", triple.source_type),
                                                       (None, "any", triple.target_type)):
                    got = step(graph, nodes, relation, direction, node_type)
                    assert set(got.tolist()) == oracle.hop(nodes.tolist(), relation, direction, node_type)


def test_support_lies_on_paths_to_the_kept_answers(film_graph):
    program = film_program("chain")
    evaluator = Evaluator(film_graph)
    values = evaluator.values(program)
    answers = evaluator.answers(program, values)
    kept = answers[:1]
    support = set(evaluator.support(program, kept, values).tolist())
    oracle = SetOracle(film_graph)
    films = oracle.hop({film_graph.index_of("P1")}, "acted_in", "out", "film")
    assert support == {f for f in films if oracle.hop({f}, "has_genre", "out", "genre") & set(kept.tolist())}


def test_frontier_limit(film_graph):
    wide = Program(Walk(Walk(Anchor("G1", "genre"), None, "any", "film"), None, "any", "person"), "count")
    with pytest.raises(FrontierTooLarge):
        Evaluator(film_graph, limit=2).answers(wide)
