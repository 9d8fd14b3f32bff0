"""The deterministic GraphScout quizzer on two schemas (HPO-shaped and films): every answer type and difficulty,
the paper's answer rules, answers re-derived by plain sets and by Cypher, objective fields, splits and the
leakage guard, determinism, the random-walk ablation."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from ark.loaders import read_query_jsonl
from ark.methods.graphscout.quiz import GraphScoutQuizConfig, Program, generate_graphscout_quiz
from ark.methods.graphscout.quiz.cypher import verify_record, verify_records
from ark.methods.graphscout.quiz.generate import SeedPool, question_nodes
from ark.methods.graphscout.quiz.objective import ALL_PATTERNS, ANSWER_TYPES, DIFFICULTIES, HYBRID, fits
from ark.methods.graphscout.quiz.records import read_graphscout_quiz
from ark.methods.graphscout.quiz.table import distribution_markdown
from ark.quiz.schema_hops import nameable_mask
from ark.storage.jsonl import write_jsonl_atomic

from .test_program import SetOracle


@pytest.fixture(scope="module")
def film_quiz(film_graph):
    return generate_graphscout_quiz(film_graph, GraphScoutQuizConfig(n=40, seed=0))


@pytest.fixture(scope="module")
def clinical_quiz(clinical_graph):
    return generate_graphscout_quiz(clinical_graph, GraphScoutQuizConfig(n=40, seed=0))


@pytest.fixture(params=["film", "clinical"])
def quiz(request, film_graph, clinical_graph, film_quiz, clinical_quiz):
    return (film_graph, film_quiz) if request.param == "film" else (clinical_graph, clinical_quiz)


def test_all_questions_made_over_every_answer_type_and_difficulty(quiz):
    _, result = quiz
    assert len(result.questions) == 40
    assert {q["answer_type"] for q in result.questions} == set(ANSWER_TYPES)
    assert {q["difficulty"] for q in result.questions} == set(DIFFICULTIES)
    assert len({q["id"] for q in result.questions}) == 40
    assert len({q["query"] for q in result.questions}) == 40


def test_answers_follow_the_answer_rules(quiz):
    graph, result = quiz
    for q in result.questions:
        ids, clues = q["answer_ids"], q["clue_ids"]
        assert q["anchor_ids"] == clues[: len(q["anchor_ids"])] and q["seed_id"] == q["anchor_ids"][0]
        if q["answer_type"] == "entity":
            assert len(ids) == 1 and q["answer"] == graph.name(graph.index_of(ids[0])) and ids[0] in clues
        elif q["answer_type"] == "set":
            assert 2 <= len(ids) <= 10 and set(ids) <= set(clues)
            assert q["answer"] == ", ".join(q["answer_names"])
            assert sorted(q["answer_names"]) == sorted(graph.name(graph.index_of(i)) for i in ids)
        elif q["answer_type"] == "number":
            assert ids == [] and int(q["answer"]) == q["answer_count"] >= 2
        else:
            assert q["answer"] in ("yes", "no") and ids == []
            assert ("witness_id" in q) == (q["answer"] == "yes")
            if q["answer"] == "yes":
                assert q["witness_id"] in clues
            if "candidate_id" in q:
                assert q["candidate_id"] in clues
                assert q["answer"] == "no" or q["witness_id"] == q["candidate_id"]


def test_answers_match_plain_sets(quiz):
    graph, result = quiz
    oracle = SetOracle(graph)
    for q in result.questions:
        program = Program.from_dict(q["params"])
        found = oracle.answers(program)
        if program.ask in ("list", "the_one"):
            assert {graph.index_of(i) for i in q["answer_ids"]} == found
        elif program.ask == "count":
            assert int(q["answer"]) == len(found)
        elif program.ask == "exists":
            assert (q["answer"] == "yes") == bool(found)
            assert q["answer"] == "no" or graph.index_of(q["witness_id"]) in found
        else:
            assert (q["answer"] == "yes") == (graph.index_of(program.candidate) in found)


def test_objective_fields_describe_the_question(quiz):
    graph, result = quiz
    for q in result.questions:
        program = Program.from_dict(q["params"])
        assert q["hops"] == program.hops and q["answer_type"] == program.answer_type
        assert q["pattern"] in ALL_PATTERNS and fits(program, q["difficulty"])
        assert (q["pattern"] == HYBRID) == (len(q["pattern_parts"]) == 2)
        assert q["pattern"] != HYBRID or q["difficulty"] == "hard"
        assert q["difficulty"] != "simple" or len(program.relations) == 1
        for anchor in [*program.anchor_ids, program.candidate]:
            if anchor is not None:  # the question names every node it is about
                assert graph.name(graph.index_of(anchor)) in q["query"]
        if q["pattern"] in ("<h,*,t>", "<h,r,t>") and program.ask != "contains":
            assert len(program.anchor_ids) == 2  # h and t


def test_cypher_recomputes_every_answer(film_graph, film_quiz, film_engine, clinical_quiz, clinical_engine):
    for result, engine in ((film_quiz, film_engine), (clinical_quiz, clinical_engine)):
        verdicts = verify_records(result.questions, engine)
        assert [v.detail for v in verdicts if not v.ok] == []
    # The check can fail: a wrong answer is reported, and so is a query the database refuses.
    counted = next(q for q in film_quiz.questions if q["answer_type"] == "number")
    assert not verify_record({**counted, "answer": str(int(counted["answer"]) + 1)}, film_engine).ok
    listed = next(q for q in film_quiz.questions if q["answer_type"] == "set")
    assert "database ids" in verify_record({**listed, "answer_ids": listed["answer_ids"][1:]}, film_engine).detail
    broken = {**counted, "params": {**counted["params"], "target": {"anchor": "nope", "type": "person"}}}
    assert not verify_records([broken], film_engine)[0].ok


def test_splits_go_by_seed_and_the_guard_keeps_test_nodes_out_of_training_clues(quiz):
    graph, result = quiz
    questions = result.questions
    assert Counter(q["split"] for q in questions) == {"train": 22, "val": 8, "test": 10}
    test_nodes = set().union(*(question_nodes(q) for q in questions if q["split"] == "test"))
    for q in questions:
        if q["split"] == "train":
            assert not set(q["clue_ids"]) & test_nodes
    assert result.guard.dropped > 0 and result.guard.test_nodes == len(test_nodes)
    assert sum(result.guard.collisions.values()) >= result.guard.dropped
    assert all(count > 0 for _, _, count in result.guard.top(graph))
    table = distribution_markdown(questions, result.guard.dropped, result.guard.test_nodes)
    assert f"{result.guard.dropped:,} training questions dropped" in table and "| **all** |" in table


def test_without_the_guard_training_questions_may_touch_test_nodes(film_graph):
    result = generate_graphscout_quiz(film_graph, GraphScoutQuizConfig(n=40, seed=0, guard=False))
    test_nodes = set().union(*(question_nodes(q) for q in result.questions if q["split"] == "test"))
    assert result.guard.dropped == 0
    assert any(set(q["clue_ids"]) & test_nodes for q in result.questions if q["split"] == "train")


def test_same_seed_same_quiz(clinical_graph):
    first = generate_graphscout_quiz(clinical_graph, GraphScoutQuizConfig(n=12, seed=5, guard=False))
    again = generate_graphscout_quiz(clinical_graph, GraphScoutQuizConfig(n=12, seed=5, guard=False))
    other = generate_graphscout_quiz(clinical_graph, GraphScoutQuizConfig(n=12, seed=6, guard=False))
    assert first.questions == again.questions
    assert [q["query"] for q in first.questions] != [q["query"] for q in other.questions]


def test_seed_node_types_are_drawn_uniformly(film_graph):
    pool = SeedPool(film_graph, nameable_mask(film_graph), 0, (1.0, 0.0, 0.0))
    rng = np.random.default_rng(0)
    types = Counter(film_graph.node_type(pool.draw("train", rng)) for _ in range(2000))
    assert set(types) == {"person", "film", "genre", "studio"}  # 40, 30, 6 and 4 nodes
    assert all(400 < count < 600 for count in types.values())


def test_random_walk_quizzer_is_labelled_and_exact(film_graph, film_engine):
    result = generate_graphscout_quiz(film_graph, GraphScoutQuizConfig(n=30, seed=0, quizzer="random-walk"))
    questions = result.questions
    assert len(questions) == 30 and {q["quizzer"] for q in questions} == {"random-walk"}
    assert {q["pattern"] for q in questions} <= {"<h,r,*>", "<h,r,t>"}
    assert all(q["id"].startswith("films-rwquiz-s0-") for q in questions)
    assert [v.detail for v in verify_records(questions, film_engine) if not v.ok] == []
    for q in questions:
        assert fits(Program.from_dict(q["params"]), q["difficulty"])


def test_quiz_files_read_back(tmp_path, film_graph, film_quiz):
    path = write_jsonl_atomic(tmp_path / "quiz.jsonl", film_quiz.questions)
    questions = read_graphscout_quiz(path, film_graph)
    assert [q.id for q in questions] == [q["id"] for q in film_quiz.questions]
    first = questions[0]
    assert first.answer == film_quiz.questions[0]["answer"] and first.clue_ids and first.difficulty in DIFFICULTIES
    assert [q.answer_ids for q in read_query_jsonl(path)] == [q.answer_ids for q in questions]


def test_bad_configurations_are_refused():
    with pytest.raises(ValueError, match="unknown quizzer 'llm'; valid: objective, random-walk"):
        GraphScoutQuizConfig(quizzer="llm")
    with pytest.raises(ValueError, match="fractions"):
        GraphScoutQuizConfig(fractions=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="n must be at least 1"):
        GraphScoutQuizConfig(n=0)
