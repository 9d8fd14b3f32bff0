"""``--ray`` as a user meets it without Ray installed, or given without its companion flags (no Ray needed)."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from tests.support.graphs import ONE_HOP, save_clinical_graph


@pytest.fixture
def inputs(tmp_path):
    graph = save_clinical_graph(tmp_path / "clinical")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "a", "query": ONE_HOP[0], "answer_ids": [ONE_HOP[1]]}) + "\n")
    return graph, queries


@pytest.mark.parametrize("command", ["retrieve", "eval"])
def test_ray_without_the_library_is_one_line_naming_the_extra_and_writes_nothing(inputs, tmp_path, monkeypatch,
                                                                                command):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the ray extra were not installed
    graph, queries = inputs
    where = ["-o", str(tmp_path / "out" / "r.jsonl")] if command == "retrieve" else ["--run-dir", str(tmp_path / "out")]
    result = CliRunner().invoke(app, [command, str(graph), "-m", "bm25", "-q", str(queries), *where,
                                      "--ray", "local"])
    assert result.exit_code == 2
    [line] = [line for line in result.stderr.splitlines() if line.strip()]
    assert line.startswith("error: --ray needs the Ray library") and "pip install 'ark-kg[ray]'" in line
    written = [path.name for path in (tmp_path / "out").rglob("*") if not path.name.endswith(".lock")]
    assert written == []  # no results, no config (a lock file may be left: see ark.storage.locks)


def test_ray_workers_without_ray_is_refused(inputs, tmp_path):
    graph, queries = inputs
    result = CliRunner().invoke(app, ["retrieve", str(graph), "-m", "bm25", "-q", str(queries), "-o",
                                      str(tmp_path / "r.jsonl"), "--ray-workers", "2"])
    assert result.exit_code == 2 and "--ray-workers needs --ray" in result.stderr
    assert not (tmp_path / "r.jsonl").exists()
