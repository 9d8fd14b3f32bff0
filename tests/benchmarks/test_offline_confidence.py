"""Confidence that means something (benchmarks/offline_confidence.py): the table's arithmetic, and on a seeded
100-question subset of the HPO quiz's test split (slow) "high" is right at least 90% of the time and given to at
least half of the questions."""

from __future__ import annotations

import pytest

from benchmarks.offline_confidence import calibrate, run_offline, sample, table


def test_the_table_gives_each_levels_share_and_hit_at_1():
    row = calibrate("quiz", [("high", True), ("high", True), ("high", False), ("medium", True), (None, False)])
    assert row.total == 5 and row.given == {"high": 3, "medium": 1, "low": 1}
    assert row.hit_at_1("high") == pytest.approx(200 / 3) and row.hit_at_1() == 60.0
    text = table([row])
    assert "| quiz | 5 | 60.00 | 3 (60.0%) | 66.67 | 1 (20.0%) | 100.00 | 1 (20.0%) | 0.00 |" in text


def test_a_sample_is_seeded_and_leaves_out_questions_without_an_answer():
    questions = [{"id": str(i), "answer_ids": ["a"] if i % 3 else []} for i in range(30)]
    first = sample(questions, 5, seed=0)
    assert first == sample(questions, 5, seed=0) and all(q["answer_ids"] for q in first)
    assert len(sample(questions, None, seed=0)) == 20


@pytest.mark.slow
def test_high_confidence_is_right_on_a_seeded_quiz_subset(hpo_home, monkeypatch):
    monkeypatch.setenv("ARK_HOME", str(hpo_home))
    from ark.loaders import open_graph
    from benchmarks.offline_confidence import load_set

    graph = open_graph("hpo")
    row = calibrate("quiz", run_offline(graph, sample(load_set("quiz", graph), 100, seed=0)))
    assert row.total == 100
    assert row.hit_at_1("high") >= 90.0, table([row])
    # Issue 28 asks for "high" on half of the questions; a first rank group of several answers is never "high" (the
    # quiz's many-answer questions often tie there): 55 of these 100 (52.0% of the whole split) on 26 November 2026,
    # since answers two hops away are weighed by the nodes in between (48 before).
    assert row.share("high") >= 50.0, table([row])
