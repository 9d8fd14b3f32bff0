"""A run folder written before the method contract carried typed records (``tests/fixtures/run-before-typed-records``:
``ark eval`` of the offline ``ark`` method, 2 agents, on the two questions below over the clinical test graph) still
loads everywhere a user opens it: ``ark trajectory show/export``, the run analysis, the run browser and its
evidence drawing; and the typed records write its trajectory lines back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.methods.ark import tooluse
from ark.runtime.records import Retrieval
from ark.runtime.trajectory_file import TrajectoryRecords, pack_record, record_trajectories
from ark.serve.questions import evidence_drawing
from ark.serve.runs import RunBrowser
from ark.storage.jsonl import read_jsonl
from tests.support.graphs import ONE_HOP, TWO_HOP, build_clinical_graph

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "run-before-typed-records"


@pytest.fixture(scope="module")
def graph():
    return build_clinical_graph()


def test_its_trajectory_lines_are_what_the_typed_records_write():
    lines = (RUN / "trajectories.jsonl").read_text().splitlines()
    for line, record in zip(lines, TrajectoryRecords(RUN / "trajectories.jsonl"), strict=True):
        retrieval = Retrieval.from_dict({**record, "agents": record["trajectories"]})
        written = pack_record({"id": record["id"], **retrieval.to_record(),
                               "trajectories": [t.to_dict() for t in retrieval.trajectories]})
        assert json.dumps(written, ensure_ascii=False) == line


def test_ark_trajectory_show_and_export_read_it(tmp_path):
    shown = CliRunner().invoke(app, ["trajectory", "show", str(RUN / "trajectories.jsonl"), "--index", "1"],
                               env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert f"Question: {TWO_HOP[0]}" in shown.output and "Agent 1 · " in shown.output
    assert TWO_HOP[1] in shown.output.split("Fused ranking")[1]
    out = tmp_path / "reference.jsonl"
    exported = CliRunner().invoke(app, ["trajectory", "export", str(RUN / "trajectories.jsonl"), "--out", str(out),
                                        "--to", "reference"])
    assert exported.exit_code == 0, exported.output
    assert [len(r["trajectories"]) for r in read_jsonl(out)] == [2, 2]


def test_the_run_analysis_of_it_is_the_one_written_then():
    records = TrajectoryRecords(RUN / "trajectories.jsonl")
    analysis = tooluse.analyze(records, read_jsonl(RUN / "per_query.jsonl"))
    assert json.loads(json.dumps(analysis)) == json.loads((RUN / "tool_use.json").read_text())


def test_the_run_browser_lists_it_and_draws_its_evidence(graph):
    browser = RunBrowser([RUN.parent])
    page = browser.trajectories(RUN.name)
    records = list(TrajectoryRecords(RUN / "trajectories.jsonl"))
    assert [item["question"] for item in page["items"]] == [ONE_HOP[0], TWO_HOP[0]]
    assert [item["steps"] for item in page["items"]] == [
        sum(len(a["steps"]) for a in r["trajectories"]) for r in records]
    assert all(len(record_trajectories(r)) == 2 for r in records)
    drawing = evidence_drawing(graph, browser.trajectory(RUN.name, 0))
    answers = [n for n in drawing["nodes"] if n["role"] == "answer"]
    assert [graph.node_id(n["index"]) for n in answers][:1] == [ONE_HOP[1]] and answers[0]["votes"] == 2
