"""`ark quiz GRAPH --style graphscout` as a user runs it: files, table, guard report, the Cypher check, bad flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.graph import save_graph
from ark.methods.graphscout.quiz.records import read_graphscout_quiz
from tests.methods.graphscout.quiz.conftest import build_film_graph

runner = CliRunner()


def says(output: str, text: str) -> bool:
    return "".join(text.split()) in "".join(output.split())


@pytest.fixture
def graph_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    for name in ("ARK_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return save_graph(build_film_graph(), tmp_path / "films")


def test_graphscout_quiz_with_splits_and_the_cypher_check(graph_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("ladybug")
    out, splits = tmp_path / "quiz.jsonl", tmp_path / "splits"
    result = runner.invoke(app, ["quiz", str(graph_dir), "--style", "graphscout", "--n", "20", "--seed", "2",
                                 "--out", str(out), "--split-dir", str(splits), "--verify"])
    assert result.exit_code == 0, result.output
    questions = read_graphscout_quiz(out)
    assert len(questions) == 20 and {q.answer_type for q in questions} <= {"entity", "boolean", "number", "set"}
    assert sum(len(read_graphscout_quiz(splits / f"{s}.jsonl")) for s in ("train", "val", "test")) == 20
    for text in ("Questions by answer type × difficulty × pattern", "Leakage guard:", "Wrote 20 questions",
                 "Cypher check: 20 answers recomputed on the graph database, 0 mismatches"):
        assert says(result.output, text), text
    again = runner.invoke(app, ["quiz", str(graph_dir), "--style", "graphscout", "--n", "20", "--seed", "2",
                                "--out", str(tmp_path / "again.jsonl"), "--quizzer", "random-walk"])
    assert again.exit_code == 0, again.output
    assert {json.loads(line)["quizzer"] for line in (tmp_path / "again.jsonl").open()} == {"random-walk"}


@pytest.mark.parametrize(("args", "message"), [
    (["--style", "graphscout", "--mix", "one_hop=1"], "--recipe, --mix and --paraphrase belong to --style stark"),
    (["--style", "riddles"], "unknown --style 'riddles'; valid: stark, graphscout"),
    (["--verify"], "--verify, --quizzer and --exclude-questions belong to --style graphscout"),
    (["--style", "graphscout", "--quizzer", "oracle"], "unknown --quizzer 'oracle'; valid: objective, random-walk"),
    (["--style", "graphscout", "--quizzer", "scout"], "--quizzer scout needs a chat model"),
    (["--style", "graphscout", "--n", "0"], "n must be at least 1"),
])
def test_bad_flags_are_named(graph_dir: Path, tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["quiz", str(graph_dir), "--out", str(tmp_path / "q.jsonl"), *args])
    assert result.exit_code == 2 and says(result.output, message), result.output
    assert not (tmp_path / "q.jsonl").exists()


def test_exclude_questions_keeps_benchmark_nodes_out_of_every_quiz_question(graph_dir: Path, tmp_path: Path) -> None:
    from ark.graph import load_graph
    from ark.methods.graphscout.quiz.generate import question_nodes

    graph = load_graph(graph_dir)
    bench = tmp_path / "data.json"  # GRBench's released format: qid, question, answer
    bench.write_text("\n".join(json.dumps(r) for r in [
        {"qid": "1", "question": "Which person directed film f5 and film o14?", "answer": "Person E4"},
        {"qid": "2", "question": "Who works with studio d3?", "answer": "Film B27, Film T19"},
        {"qid": "3", "question": "How many awards?", "answer": "no such node"},
    ]) + "\n")
    named = {"Film F5", "Film O14", "Studio D3", "Person E4", "Film B27", "Film T19"}
    excluded = {graph.node_id(i) for i in range(graph.num_nodes) if graph.name(i) in named}
    assert len(excluded) == 6
    plain = runner.invoke(app, ["quiz", str(graph_dir), "--style", "graphscout", "--n", "40", "--seed", "3",
                                "--out", str(tmp_path / "plain.jsonl")])
    assert plain.exit_code == 0, plain.output
    touched = {n for line in (tmp_path / "plain.jsonl").open() for n in question_nodes(json.loads(line))}
    assert excluded <= touched  # without the option these nodes are answers, anchors or clues
    out = tmp_path / "quiz.jsonl"
    result = runner.invoke(app, ["quiz", str(graph_dir), "--style", "graphscout", "--n", "40", "--seed", "3",
                                 "--out", str(out), "--exclude-questions", str(bench)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.open()]
    assert records and all(not (question_nodes(r) & excluded) for r in records)
    assert all(r["seed_id"] not in excluded for r in records)
    assert says(result.output, "Excluded 6 nodes from 3 benchmark questions (3 named in a question, 3 matched by "
                               "an answer); 1 answers and 1 questions matched no node;")
    assert "quiz questions dropped" in result.output


def test_exclude_questions_names_a_bad_file(graph_dir: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bad.json"
    bench.write_text('{"qid": "1", "answer": "x"}\n')
    result = runner.invoke(app, ["quiz", str(graph_dir), "--style", "graphscout", "--out", str(tmp_path / "q.jsonl"),
                                 "--exclude-questions", str(bench)])
    assert result.exit_code == 2 and says(result.output, "bad.json, line 1: expected an object with 'question'")
    assert not (tmp_path / "q.jsonl").exists()
