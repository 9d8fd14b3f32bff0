"""The HPO training quiz kept beside a SeedER model is made again when the graph changed version since."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest

import ark.quiz
import ark.quiz.output
from ark.cli.train_seeder_cmd import _builtin_quiz
from ark.graph import load_graph, save_graph
from ark.graph.versioning import update_graph
from ark.graph.versioning.delta import GraphDelta, empty_edges, empty_nodes
from tests.support.graphs import build_clinical_graph


def test_the_quiz_follows_the_graph_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int | None] = []

    def generate(kg, _recipe):
        made.append(kg.metadata.get("graph_version", 0))
        return SimpleNamespace(questions=[])

    def write(_questions, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for split in ("train", "val"):
            (folder / f"{split}.jsonl").write_text(f"{made[-1]}\n")

    monkeypatch.setattr(ark.quiz, "generate_quiz", generate)
    monkeypatch.setattr(ark.quiz.output, "write_splits", write)
    save_graph(build_clinical_graph(), tmp_path / "g")
    graph = load_graph(tmp_path / "g")
    train, _ = _builtin_quiz(graph, tmp_path / "model")
    _builtin_quiz(load_graph(tmp_path / "g"), tmp_path / "model")  # same version: kept
    assert made == [0]
    row = {"id": graph.node_id(0), "type": "phenotype", "name": "Changed", "text": "Changed", "properties": "{}"}
    update_graph(tmp_path / "g", GraphDelta(pa.Table.from_pylist([row], schema=empty_nodes().schema), empty_edges(),
                                            empty_edges(), pa.array([], pa.string())))
    train, _ = _builtin_quiz(load_graph(tmp_path / "g"), tmp_path / "model")
    assert made == [0, 1] and train.read_text() == "1\n"
