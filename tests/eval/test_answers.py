"""Question-answering evaluation: query files with an answer text (with or without answer ids), GRBench question
files as query files, answer metrics next to retrieval metrics (per query, overall, per template), and the LLM
judge off by default and labelled when asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ark.eval import open_queries, read_queries, score_results, summarize
from ark.eval.experiment import judge_rows
from ark.eval.scoring import markdown_table
from ark.loaders.grbench import load_grbench
from ark.loaders.queries import Query, read_query_jsonl
from ark.metrics.judge import JUDGE_LABEL, AnswerJudge
from tests.support.graphs import build_clinical_graph
from tests.support.openai_server import text_reply, turn_script

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grbench"


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_query_lines_may_carry_an_answer_text_with_or_instead_of_ids(tmp_path):
    path = write(tmp_path / "qa.jsonl", [
        {"id": "ids", "query": "q1", "answer_ids": ["OMIM:154700"]},
        {"id": "both", "query": "q2", "answer_ids": ["NCBIGene:2200"], "answer": "FBN1", "answer_type": "entity"},
        {"id": "text", "query": "q3", "answer": 2},
        {"id": "list", "query": "q4", "answer": ["TGFBR1", "TGFBR2"]},
        {"id": "yes", "query": "q5", "answer": True, "template": "check"},
    ])
    queries = {q.id: q for q in read_query_jsonl(path)}
    assert queries["ids"] == Query("ids", "q1", ["OMIM:154700"])  # old files read as before
    assert (queries["both"].answer, queries["both"].answer_type) == ("FBN1", "entity")
    assert (queries["text"].answer_ids, queries["text"].answer, queries["text"].answer_type) == ([], "2", "number")
    assert (queries["list"].answer, queries["list"].answer_type) == ("TGFBR1, TGFBR2", "set")
    assert (queries["yes"].answer, queries["yes"].answer_type) == ("yes", "boolean")


@pytest.mark.parametrize(("line", "message"), [
    ({"id": "a", "query": "q"}, "missing field(s) answer_ids; required: id, query, answer_ids (or answer"),
    ({"id": "a", "query": "q", "answer": "x", "answer_type": "date"}, "unknown answer_type 'date'; valid: entity"),
    ({"id": "a", "query": "q", "answer_ids": [], "answer_type": "set"}, "'answer_type' given without an 'answer'"),
    ({"id": "a", "query": "q", "answer": {"x": 1}}, "'answer' must be text"),
])
def test_bad_answer_fields_are_refused_with_the_reason(tmp_path, line, message):
    with pytest.raises(ValueError, match="line 1") as error:
        read_query_jsonl(write(tmp_path / "bad.jsonl", [line]))
    assert message in str(error.value)


def test_grbench_questions_load_as_query_files_with_answers_matched_to_nodes():
    graph = load_grbench(FIXTURES / "biomedical")
    for source in (FIXTURES / "biomedical", FIXTURES / "biomedical" / "data.json"):
        assert [q.id for q in read_queries(source).queries] == ["0", "1", "2"]
    queries, check = open_queries(FIXTURES / "biomedical", graph)
    assert check.ok and check.source_format == "grbench"
    by_id = {q.id: q for q in queries}
    assert sorted(by_id["0"].answer_ids) == ["DB001", "DB002"]  # "Examplomab, Testofen"
    assert sorted(by_id["1"].answer_ids) == ["D01", "D02"]  # names with commas kept whole
    assert by_id["2"].answer == "1" and by_id["2"].answer_ids == []  # a count names no node
    with pytest.raises(ValueError, match="--split"):
        read_queries(FIXTURES / "biomedical", split="test")


def scored(queries, results, graph):
    return score_results(queries, results, graph)


def test_answer_metrics_sit_beside_retrieval_metrics():
    graph = build_clinical_graph()
    queries = [
        Query("genes", "Which genes ...?", ["NCBIGene:7046", "NCBIGene:7048"], "one", "TGFBR1, TGFBR2", "set"),
        Query("count", "How many ...?", [], "one", "2", "number"),
        Query("yes", "Is ...?", [], "two", "yes"),
        Query("plain", "Which disease ...?", ["OMIM:154700"], "two"),
    ]
    results = [
        {"id": "genes", "ranked": ["NCBIGene:7048", "OMIM:609192"], "answer": {"text": "TGFBR2", "type": "set"}},
        {"id": "count", "ranked": ["OMIM:609192"], "answer": {"text": "There are 2.", "type": "number"}},
        {"id": "yes", "ranked": []},  # no answer: scores 0
        {"id": "plain", "ranked": ["OMIM:154700"]},
    ]
    rows = {row["id"]: row for row in scored(queries, results, graph)}
    assert rows["genes"]["answer_metrics"] == {"exact_match": 0.0, "f1": pytest.approx(2 / 3), "item_f1":
                                               pytest.approx(2 / 3)}
    assert rows["genes"]["hit@1"] == 1.0 and rows["genes"]["predicted_answer"] == "TGFBR2"
    assert rows["count"]["answer_metrics"]["exact_match"] == 1.0 and rows["count"]["answer_type"] == "number"
    assert rows["yes"]["answer_type"] == "boolean" and rows["yes"]["answer_metrics"]["f1"] == 0.0
    assert "answer_metrics" not in rows["plain"]
    summary = summarize(list(rows.values()))
    assert summary["overall"]["n"] == 2  # retrieval metrics over the queries with answer ids only
    assert summary["overall"]["hit@1"] == 1.0 and summary["n_without_valid_answer"] == 0
    assert summary["answers"]["n"] == 3 and summary["answers"]["exact_match"] == pytest.approx(1 / 3)
    assert summary["n_answer_only"] == 2
    assert summary["by_template"]["one"]["answers"]["n"] == 2 and "answers" in summary["by_template"]["two"]
    assert summary["by_template"]["one"]["n"] == 1
    table = markdown_table(summary)
    assert "| scope | n | Hit@1 | Hit@5 | R@20 | MRR | n answered | EM | F1 |" in table
    assert "| overall | 2 | 100.00 | 100.00 | 75.00 | 100.00 | 3 | 33.33 | 55.56 |" in table
    assert "answer metrics: exact match and token F1" in table


def test_files_without_answers_score_as_before():
    graph = build_clinical_graph()
    rows = scored([Query("a", "q", ["OMIM:154700"]), Query("b", "q", ["OMIM:999"])],
                  [{"id": "a", "ranked": ["OMIM:154700"]}, {"id": "b", "ranked": []}], graph)
    summary = summarize(rows)
    assert "answers" not in summary and summary["overall"]["n"] == 2 and summary["n_without_valid_answer"] == 1
    assert "n answered" not in markdown_table(summary)


def test_judge_grades_answers_only_when_asked_and_is_labelled(openai_server, tmp_path):
    from ark.llm import OpenAIChatClient, resolve_settings

    graph = build_clinical_graph()
    queries = [Query("a", "Which gene?", [], None, "FBN1", "entity"), Query("b", "How many?", [], None, "2")]
    rows = scored(queries, [{"id": "a", "answer": {"text": "fibrillin-1 (FBN1)", "type": "entity"}},
                            {"id": "b", "answer": {"text": "3", "type": "number"}}], graph)
    assert "judge_accuracy" not in summarize(rows)["answers"]  # off by default
    openai_server.responder = turn_script([text_reply("CORRECT")])  # every request is a first turn
    settings = resolve_settings(base_url=openai_server.base_url, model="judge-model", api_key="k", environ={},
                                config_path=tmp_path / "absent.toml", use_cache=False)
    judge = AnswerJudge(OpenAIChatClient(settings))
    judge_rows(rows, judge)
    assert [row["answer_metrics"]["judge_accuracy"] for row in rows] == [1.0, 1.0]
    assert rows[0]["answer_metrics"]["exact_match"] == 0.0  # the judge is reported beside, not instead
    summary = summarize(rows)
    summary["answers"]["judge_model"] = "judge-model"
    assert summary["answers"]["judge_accuracy"] == 1.0
    assert JUDGE_LABEL in markdown_table(summary) and "| Judge |" in markdown_table(summary)
    assert len(openai_server.requests) == 2


def test_grbench_questions_are_scored_per_domain_and_level(tmp_path, monkeypatch):
    import ark.loaders.grbench as grbench

    graph = load_grbench(FIXTURES / "biomedical")
    shipped = json.loads(grbench.LEVELS_FILE.read_text())
    assert "Graph-CoT" in shipped["about"] and shipped["source"].startswith("https://github.com/PeterGriffinJin/")
    queries, _check = open_queries(FIXTURES / "biomedical", graph)
    assert {q.template for q in queries} == {"biomedical/easy"}  # qids 0-69: easy in the shipped table

    table = write(tmp_path / "levels.json", [])
    table.write_text(json.dumps({"levels": ["easy", "medium", "hard"],
                                 "domains": {"biomedical": [[0, 1, "easy"], [2, 9, "medium"]]}}))
    monkeypatch.setattr(grbench, "LEVELS_FILE", table)
    queries, _check = open_queries(FIXTURES / "biomedical", graph)
    assert {q.id: q.template for q in queries} == {"0": "biomedical/easy", "1": "biomedical/easy",
                                                   "2": "biomedical/medium"}
    results = [{"id": q.id, "ranked": [], "answer": {"text": q.answer if q.id != "1" else "wrong", "type": None}}
               for q in queries]
    summary = summarize(score_results(queries, results, graph))
    assert summary["by_template"]["biomedical/easy"]["answers"]["f1"] == pytest.approx(0.5)
    assert summary["by_template"]["biomedical/medium"]["answers"]["f1"] == 1.0
    assert "biomedical/medium" in markdown_table(summary, "run")

    table.write_text(json.dumps({"domains": {"biomedical": [[0, 1, "trivial"]]}}))
    with pytest.raises(ValueError, match="'trivial'.*easy, medium, hard"):
        grbench.grbench_levels()
