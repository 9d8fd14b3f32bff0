"""``ark experiment paper-table GRAPH --paper graphscout``: GraphScout's Table 1 as a command. Offline on an HPO quiz
sample, GraphScout's scripted solver runs and the seven prompting baselines are kept and marked "needs --model";
with a model (the scripted loopback server) every row runs; the paper's numbers stand in their own labelled
columns."""

from __future__ import annotations

import json

import pytest

from ark.experiments.graphscout_table import TABLE_1, level_of
from tests.support.cli import cli_invoker
from tests.support.openai_server import text_reply

pytest.importorskip("ladybug")
BASELINES = ["BaseLLM", "TextRAG", "GraphRAG", "Cypher", "GraphCoT", "PolyG", "GraphCounselor"]


@pytest.fixture
def cli():
    from ark.cli.experiment_cmd import register

    return cli_invoker(register)


@pytest.fixture
def quiz(use_hpo_home, tmp_path, monkeypatch):
    """Six questions of the GraphScout quizzer on HPO (seeded), as a query file; no model configured."""
    from ark.loaders import open_graph
    from ark.methods.graphscout.quiz.generate import GraphScoutQuizConfig, generate_graphscout_quiz

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    questions = generate_graphscout_quiz(open_graph("hpo"), GraphScoutQuizConfig(n=6, seed=0)).questions
    path = tmp_path / "quiz.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions))
    return path


def rows_of(report: dict, table: str) -> dict[str, list[str]]:
    return {row[0]: row for row in report["tables"][table]["rows"]}


def test_offline_the_solver_runs_and_the_model_rows_are_marked(cli, quiz, tmp_path):
    out = tmp_path / "report"
    config = tmp_path / "rows.toml"  # the node retriever over BM25: embedding HPO's names with MiniLM takes ~80 s
    config.write_text('[graphscout]\nretriever.index = "bm25"\n')
    result = cli("experiment", "paper-table", "hpo", "--paper", "graphscout", "--queries", quiz, "--out", out,
                 "--runs", tmp_path / "runs", "--no-progress", "--config", config)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "results.json").read_text())
    columns = report["tables"]["table1"]["columns"]
    assert "Paper: GRBench Healthcare F1 (backbone)" in columns and "Judge" not in columns
    rows = rows_of(report, "table1")
    assert list(rows) == [*BASELINES, "GraphScout"]  # no row dropped
    for label in BASELINES:
        assert rows[label][2] == "needs --model" and rows[label][5] == "—"
    assert rows["GraphCounselor"][-2] == "0.484 (Qwen-Max)"  # the paper's best F1 on Healthcare, with its backbone
    solver = rows["GraphScout"]
    assert solver[1] == "offline (scripted solver, not an LLM)" and solver[2] == "ran" and solver[3] == "6"
    assert 0.0 <= float(solver[5]) <= 1.0 and solver[-2] == "0.855 (4B w/ train)"
    assert set(report["tables"]["levels"]["columns"][2:]) <= {"simple F1 (n)", "medium F1 (n)", "hard F1 (n)"}
    assert "this graph is not a GRBench domain" in (out / "report.md").read_text()
    assert len(report["tables"]["paper"]["rows"]) == sum(len(rows) for rows in TABLE_1.values())  # 32 as printed
    assert "needs --model" in result.text


def test_with_a_model_every_row_runs_and_the_judge_is_a_column(cli, quiz, tmp_path, openai_server, monkeypatch):
    def respond(body):  # one reply every baseline's protocol reads, and the judge's verdict
        if body["model"] == "judge-model":
            return text_reply("CORRECT")
        return text_reply("Thought: done.\nAction: Finish[yes]\nVerdict: accept\nAnswer: yes\n\\answer{yes}")

    openai_server.responder = respond
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)  # the judge's endpoint comes from the settings
    config = tmp_path / "rows.toml"  # text-rag over BM25: embedding all of HPO with MiniLM takes minutes
    config.write_text('[text-rag]\nindex = "bm25"\ntop_k = 3\n')
    out = tmp_path / "report"
    result = cli("experiment", "paper-table", "hpo", "--paper", "graphscout", "--queries", quiz, "--limit", "2",
                 "--out", out, "--runs", tmp_path / "runs", "--no-progress", "--model", "test-model", "--base-url",
                 openai_server.base_url, "--judge", "--judge-model", "judge-model", "--config", config)
    assert result.exit_code == 0, result.output
    rows = rows_of(json.loads((out / "results.json").read_text()), "table1")
    for label in [*BASELINES, "GraphScout"]:
        assert rows[label][1] == "openai:test-model" and rows[label][2] == "ran" and rows[label][3] == "2"
        assert rows[label][6] == "1.000"  # the judge's column
    assert {body["model"] for body in openai_server.requests} == {"test-model", "judge-model"}


def test_paper_table_needs_a_known_paper_and_tables_named_after_its_methods(cli, quiz, tmp_path):
    result = cli("experiment", "paper-table", "hpo", "--queries", quiz, "--out", tmp_path / "r")
    assert result.exit_code == 2 and "needs --paper, one of: graphscout" in result.text
    config = tmp_path / "rows.toml"
    config.write_text('[dense]\nembedder = "x"\n')
    result = cli("experiment", "paper-table", "hpo", "--paper", "graphscout", "--queries", quiz, "--config", config)
    assert result.exit_code == 2 and "'dense' is not a table named after a row's method" in result.text


def test_the_paper_table_flags_belong_to_it_alone(cli, quiz, tmp_path):
    result = cli("experiment", "fusion", "hpo", "--queries", quiz, "--paper", "graphscout", "--out", tmp_path / "r")
    assert result.exit_code == 2 and "--paper, --judge and --judge-model belong to paper-table" in result.text


@pytest.mark.parametrize(("template", "level"), [("set/easy", "easy"), ("entity/simple", "simple"),
                                                 ("boolean/hard", "hard"), ("one_hop", None), (None, None)])
def test_levels_come_from_the_templates(template, level):
    assert level_of(template) == level
