"""STaRK metrics on hand-computed cases, and agreement with ir-measures on random rankings."""

from __future__ import annotations

import random

import ir_measures
import pytest
from ir_measures import RR, R, ScoredDoc, Success

from ark.metrics import METRIC_NAMES, filter_answers, mean_metrics, query_metrics


def test_single_answer_at_rank_three():
    m = query_metrics(["x", "y", "a", "z"], ["a"])
    assert m["hit@1"] == 0.0
    assert m["hit@5"] == 1.0
    assert m["recall@5"] == 1.0
    assert m["mrr"] == pytest.approx(1 / 3)


def test_recall_counts_all_answers_even_beyond_twenty():
    answers = [f"a{i}" for i in range(25)]
    ranked = answers[:20] + ["x"] * 3 + answers[20:]  # the 5 other answers come after rank 20
    m = query_metrics(ranked, answers)
    assert m["recall@20"] == pytest.approx(20 / 25)  # never 1 with more than 20 answers
    assert m["recall@5"] == pytest.approx(5 / 25)
    assert m["hit@1"] == 1.0 and m["mrr"] == 1.0


def test_duplicates_count_once_at_first_position():
    # deduplicated ranking: b, x, a -> the answer a is third, not fourth
    m = query_metrics(["b", "x", "b", "a"], ["a"])
    assert m["mrr"] == pytest.approx(1 / 3)
    # a repeated answer does not count twice towards recall
    m = query_metrics(["a", "a", "a"], ["a", "b"])
    assert m["recall@5"] == pytest.approx(0.5)


def test_order_of_the_list_decides_ties():
    # equal scores are not re-sorted: the method's order stands (STaRK's tie order is implementation-defined)
    assert query_metrics(["x", "a"], ["a"])["hit@1"] == 0.0
    assert query_metrics(["a", "x"], ["a"])["hit@1"] == 1.0


def test_empty_ranking_and_no_answers_score_zero():
    assert query_metrics([], ["a"]) == dict.fromkeys(METRIC_NAMES, 0.0)
    assert query_metrics(["a", "b"], []) == dict.fromkeys(METRIC_NAMES, 0.0)


def test_answers_not_in_the_graph_are_dropped_and_counted():
    in_graph = {"a", "b"}.__contains__
    kept, dropped = filter_answers(["a", "zzz", "b", "a", "qqq"], in_graph)
    assert kept == ["a", "b"]
    assert dropped == 2
    kept, dropped = filter_answers(["zzz"], in_graph)
    assert (kept, dropped) == ([], 1)
    assert query_metrics(["zzz"], kept)["hit@1"] == 0.0  # a query left without answers scores 0


def test_mrr_has_no_cutoff_unless_truncated():
    ranked = [f"x{i}" for i in range(20)] + ["a"]
    assert query_metrics(ranked, ["a"])["mrr"] == pytest.approx(1 / 21)
    truncated = query_metrics(ranked, ["a"], truncate=20)
    assert truncated["mrr"] == 0.0 and truncated["hit@20"] == 0.0
    assert query_metrics(ranked, ["a"], truncate=21)["mrr"] == pytest.approx(1 / 21)
    with pytest.raises(ValueError, match="truncate"):
        query_metrics(ranked, ["a"], truncate=0)


def test_mean_counts_every_query():
    rows = [query_metrics(["a"], ["a"]), query_metrics(["x"], ["a"]), query_metrics([], [])]
    assert mean_metrics(rows)["hit@1"] == pytest.approx(1 / 3)
    assert mean_metrics([]) == dict.fromkeys(METRIC_NAMES, 0.0)


def test_agrees_with_ir_measures_on_random_rankings():
    rng = random.Random(7)
    nodes = [f"n{i}" for i in range(60)]
    qrels, run, ours = [], [], {}
    for q in range(200):
        qid = f"q{q}"
        answers = rng.sample(nodes, rng.randint(1, 30))
        ranked = rng.sample(nodes, rng.randint(0, 40))
        qrels += [ir_measures.Qrel(qid, a, 1) for a in answers]
        # strictly decreasing scores, so ir-measures keeps our order
        run += [ScoredDoc(qid, node, float(len(ranked) - i)) for i, node in enumerate(ranked)]
        ours[qid] = query_metrics(ranked, answers)
    measures = {Success @ 1: "hit@1", Success @ 5: "hit@5", Success @ 10: "hit@10", Success @ 20: "hit@20",
                R @ 5: "recall@5", R @ 10: "recall@10", R @ 20: "recall@20", RR: "mrr"}
    theirs = {(m.query_id, measures[m.measure]): m.value for m in ir_measures.iter_calc(list(measures), qrels, run)}
    compared = 0
    for qid, values in ours.items():
        for name in measures.values():
            # ir-measures skips queries with an empty run; ours scores them 0
            expected = theirs.get((qid, name), 0.0)
            assert values[name] == pytest.approx(expected), (qid, name)
            compared += 1
    assert compared == 200 * len(measures)
    assert any(v["mrr"] == 0 for v in ours.values()) and any(0 < v["recall@20"] < 1 for v in ours.values())


def test_first_answer_rank_uses_the_same_truncated_deduplicated_ranking_as_mrr():
    from ark.eval.scoring import first_answer_rank

    ranked = ["x", "x", "y", "a"]
    assert first_answer_rank(ranked, ["a"]) == 3  # the repeated x counts once
    assert query_metrics(ranked, ["a"], truncate=2)["mrr"] == 0.0
    assert first_answer_rank(ranked, ["a"], truncate=2) is None
    assert first_answer_rank(ranked, ["a"], truncate=3) == 3
