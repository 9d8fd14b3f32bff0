"""`ark graph import parquet` and `ark graph info` as a user runs them, on a small ark-agent-cli folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.graph import load_graph
from tests.support.graphs import write_folder

runner = CliRunner()


def says(output: str, text: str) -> bool:
    """``text`` appears in ``output``, ignoring the line breaks and spaces rich adds when it wraps long lines."""
    return "".join(text.split()) in "".join(output.split())


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))


def test_import_then_info_describes_the_graph(tmp_path: Path) -> None:
    source = write_folder(tmp_path / "marfan", "parquet", graph_json={"id": "marfan", "name": "Marfan demo"})
    out = tmp_path / "graphs" / "marfan"
    imported = runner.invoke(app, ["graph", "import", "parquet", str(source), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    assert load_graph(out).num_nodes == 3

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
def test_build_hpo_then_info_prints_the_documented_counts(use_hpo_home: Path) -> None:
    built = runner.invoke(app, ["graph", "build", "hpo"])
    assert built.exit_code == 0, built.output
    info = runner.invoke(app, ["graph", "info", "hpo"])
    assert info.exit_code == 0, info.output
    assert "36,853 nodes, 565,106 edges" in info.output
    assert "Human Phenotype Ontology, release 2025-01-16" in info.output


def test_import_onto_its_own_source_fails_and_keeps_the_source(tmp_path: Path) -> None:
    source = write_folder(tmp_path / "precious", "parquet", graph_json={"id": "precious"})
    before = sorted(p.name for p in source.iterdir())
    for out in (source, tmp_path):  # the source itself, and a folder holding it
        result = runner.invoke(app, ["graph", "import", "parquet", str(source), "--out", str(out)])
        assert result.exit_code == 2, result.output
        assert says(result.output, "new or empty")
        assert sorted(p.name for p in source.iterdir()) == before


def test_import_onto_an_existing_non_graph_folder_fails_and_keeps_it(tmp_path: Path) -> None:
    source = write_folder(tmp_path / "marfan", "csv")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    result = runner.invoke(app, ["graph", "import", "parquet", str(source), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert says(result.output, str(out)) and says(result.output, "new or empty")
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]
    assert (out / "thesis.tex").read_text() == "years of work"


def test_import_over_an_earlier_import_replaces_it(tmp_path: Path) -> None:
    out = tmp_path / "graphs" / "marfan"
    first = write_folder(tmp_path / "a", "csv")
    assert runner.invoke(app, ["graph", "import", "parquet", str(first), "--out", str(out)]).exit_code == 0
    second = write_folder(tmp_path / "b", "jsonl", graph_json={"id": "b", "name": "second"})
    refused = runner.invoke(app, ["graph", "import", "parquet", str(second), "--out", str(out)])
    assert refused.exit_code == 1 and "--replace" in refused.output  # another source: not replaced silently
    result = runner.invoke(app, ["graph", "import", "parquet", str(second), "--out", str(out), "--replace"])
    assert result.exit_code == 0, result.output
    assert load_graph(out).metadata["name"] == "second"


def test_stark_import_refuses_an_output_holding_its_root(tmp_path: Path) -> None:
    root = tmp_path / "stark" / "prime"
    (root / "processed").mkdir(parents=True)
    result = runner.invoke(app, ["graph", "import", "stark", "prime", "--root", str(root), "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert says(result.output, "new or empty")
    assert (root / "processed").is_dir()
