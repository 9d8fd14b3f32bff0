"""`ark train graphscout` as a user runs it: bad input is one clear line (exit 2) before any model is loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.graph import save_graph
from tests.support.graphs import build_clinical_graph

runner = CliRunner()


def says(output: str, text: str) -> bool:
    return "".join(text.split()) in "".join(output.split())


@pytest.fixture
def graph_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    return save_graph(build_clinical_graph(), tmp_path / "clinical")


def _train(graph_dir: Path, tmp_path: Path, *extra: str):
    return runner.invoke(app, ["train", "graphscout", str(graph_dir), "--base", str(tmp_path / "base"),
                               "--out", str(tmp_path / "run"), *extra])


def test_a_missing_quiz_file_says_how_to_write_one(graph_dir, tmp_path):
    result = _train(graph_dir, tmp_path, "--quiz", str(tmp_path / "none.jsonl"))
    assert result.exit_code == 2
    assert says(result.output, "no such file; write one with 'ark quiz") and "--style graphscout" in result.output


def test_bad_settings_name_the_valid_keys(graph_dir, tmp_path):
    quiz = tmp_path / "quiz.jsonl"
    quiz.write_text("{}\n")
    result = _train(graph_dir, tmp_path, "--quiz", str(quiz), "--set", "groupsize=4")
    assert result.exit_code == 2 and says(result.output, "groupsize") and says(result.output, "group_size")
    result = _train(graph_dir, tmp_path, "--quiz", str(quiz), "--set", "solver.max_turns=0")
    assert result.exit_code == 2 and says(result.output, "solver.max_turns")
    result = _train(graph_dir, tmp_path, "--quiz", str(quiz), "--preset", "huge")
    assert result.exit_code == 2 and says(result.output, "valid: paper, tiny-cpu")


def test_a_quiz_without_answers_is_refused_with_the_line(graph_dir, tmp_path):
    pytest.importorskip("trl")
    pytest.importorskip("ladybug")
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    build_tiny_model(tmp_path / "base", texts=["hello world"], spec=TinyModelSpec(hidden_size=32, head_dim=8,
                                                                                    vocab_size=300))
    quiz = tmp_path / "quiz.jsonl"
    quiz.write_text(json.dumps({"id": "q1", "query": "Which genes?", "answer_ids": ["NCBIGene:2200"]}) + "\n")
    result = _train(graph_dir, tmp_path, "--quiz", str(quiz))
    assert result.exit_code == 2
    assert says(result.output, "line 1: missing field(s) answer, answer_type, clue_ids")
    assert not (tmp_path / "run" / "model").exists()
