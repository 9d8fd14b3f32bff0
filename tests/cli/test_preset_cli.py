"""``--preset paper`` on the command line and ``preset = "paper"`` in a TOML options file: the run's config records
the preset and the paper's options; ``ark methods --show-preset paper`` lists what it sets, per family."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from tests.support.graphs import ONE_HOP, save_clinical_graph


@pytest.fixture(scope="module")
def clinical(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("preset") / "clinical")


@pytest.fixture(scope="module")
def queries(clinical) -> Path:
    """One question, beside the graph."""
    (clinical.parent / "q.jsonl").write_text(json.dumps({"id": "a", "query": ONE_HOP[0],
                                                         "answer_ids": [ONE_HOP[1]]}) + "\n")
    return clinical.parent / "q.jsonl"


def evaluate(clinical: Path, queries: Path, run: Path, *flags: str):
    result = CliRunner().invoke(app, ["eval", str(clinical), "-m", "ark", "--offline", "-q", str(queries),
                                      "--run-dir", str(run), "--no-progress", *flags])
    return result, (json.loads((run / "config.json").read_text()) if (run / "config.json").is_file() else None)


def test_eval_with_preset_paper_records_the_preset_and_the_papers_options(clinical, queries, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    result, config = evaluate(clinical, queries, tmp_path / "run", "--preset", "paper", "--set", "n_agents=2")
    assert result.exit_code == 0, result.output
    assert config["preset"] == "paper"
    options = config["method_options"]
    assert options["scoring"] == "plain" and options["fusion_evidence"] is False
    assert options["n_agents"] == 2  # --set over the preset
    again, _ = evaluate(clinical, queries, tmp_path / "run", "--preset", "paper", "--set", "n_agents=2")
    assert again.exit_code == 0, again.output  # the same configuration resumes
    plain, config = evaluate(clinical, queries, tmp_path / "plain")
    assert plain.exit_code == 0 and "preset" not in config  # no preset: the config as before presets existed
    assert config["method_options"]["scoring"] == "fielded" and "fusion_evidence" not in config["method_options"]


def test_a_toml_options_file_names_the_preset(clinical, queries, tmp_path, monkeypatch):
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    options = tmp_path / "ark.toml"
    options.write_text('[ark]\npreset = "paper"\nmax_steps = 8\n')
    result, config = evaluate(clinical, queries, tmp_path / "run", "--config", str(options))
    assert result.exit_code == 0, result.output
    assert config["preset"] == "paper"
    assert config["method_options"]["scoring"] == "plain" and config["method_options"]["max_steps"] == 8


@pytest.mark.parametrize(("flags", "words"), [
    (["--preset", "papr"], "unknown preset 'papr'; valid: paper"),
    (["-m", "bm25", "--preset", "paper"], "method 'bm25' has no preset 'paper'"),  # BM25 is its own baseline
])
def test_a_bad_preset_fails_naming_the_choices(clinical, queries, tmp_path, flags, words):
    result = CliRunner().invoke(app, ["eval", str(clinical), "-m", "ark", "--offline", "-q", str(queries),
                                      "--run-dir", str(tmp_path / "run"), "--no-progress", *flags])
    assert result.exit_code != 0
    assert words in " ".join(result.output.split())


def test_methods_show_preset_lists_each_setting_with_the_papers_value_and_source(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    result = CliRunner().invoke(app, ["methods", "--show-preset", "paper"])
    assert result.exit_code == 0, result.output
    rows = [[c.strip() for c in line.strip().strip("│").split("│")] for line in result.stdout.splitlines()
            if line.startswith("│")]
    by_key = {(r[0], r[1]): r[2:] for r in rows}
    assert by_key[("ark", "scoring")] == ['"fielded"', '"plain"', "ARK (Polonuer et al.), Section 3.1"]
    assert by_key[("ark", "fusion_evidence")][:2] == ["true", "false"]
    assert by_key[("seeder", "fill")][:2] == ["true", "false"]
    assert by_key[("graphscout", "retriever.index")][:2] == ['"bm25"', '"dense"']
    assert by_key[("seeder (ark train seeder)", "hidden")][1] == "prime 16 / mag 32 / amazon 64"
    assert {r[0] for r in rows} == {"ark", "seeder", "graphscout", "seeder (ark train seeder)", "cypher", "graph-cot",
                                    "graph-counselor", "graph-rag", "polyg"}
    assert by_key[("graph-rag", "node_index")][:2] == ['"bm25"', '"dense"']
    bad = CliRunner().invoke(app, ["methods", "--show-preset", "fast"])
    assert bad.exit_code != 0 and "unknown preset 'fast'; valid: paper" in " ".join(bad.output.split())
