"""`ark graph import parquet` and `ark graph info` as a user runs them, on a small ark-agent-cli folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.graph import KnowledgeGraph
from tests.test_loaders_tabular import write_folder

runner = CliRunner()


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))


def test_import_then_info_describes_the_graph(tmp_path: Path) -> None:
    source = write_folder(tmp_path / "marfan", "parquet", graph_json={"id": "marfan", "name": "Marfan demo"})
    out = tmp_path / "graphs" / "marfan"
    imported = runner.invoke(app, ["graph", "import", "parquet", str(source), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    assert KnowledgeGraph.load(out).num_nodes == 3

    info = runner.invoke(app, ["graph", "info", str(out)])
    assert info.exit_code == 0, info.output
    assert "3 nodes, 2 edges" in info.output
    for expected in ("disease", "gene", "phenotype", "has_phenotype", "causes"):
        assert expected in info.output


def test_import_of_bad_edges_fails_cleanly_and_writes_nothing(tmp_path: Path) -> None:
    edges = [{"from": "007", "to": "nowhere", "type": "has_phenotype", "properties": None}]
    source = write_folder(tmp_path / "bad", "jsonl", edges=edges)
    out = tmp_path / "graphs" / "bad"
    result = runner.invoke(app, ["graph", "import", "parquet", str(source), "--out", str(out)])
    assert result.exit_code == 2
    assert "nowhere" in result.output
    assert not out.exists()


def test_info_of_an_unknown_graph_lists_the_built_in_ones(tmp_path: Path) -> None:
    result = runner.invoke(app, ["graph", "info", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert "hpo" in result.output


def test_build_rejects_an_unknown_name() -> None:
    result = runner.invoke(app, ["graph", "build", "wikidata"])
    assert result.exit_code == 2
    assert "hpo" in result.output


@pytest.mark.slow
def test_build_hpo_then_info_prints_the_documented_counts() -> None:
    built = runner.invoke(app, ["graph", "build", "hpo"])
    assert built.exit_code == 0, built.output
    info = runner.invoke(app, ["graph", "info", "hpo"])
    assert info.exit_code == 0, info.output
    assert "36,853 nodes, 565,106 edges" in info.output
    assert "Human Phenotype Ontology, release 2025-01-16" in info.output
