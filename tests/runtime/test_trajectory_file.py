"""Trajectory files (format 2): each agent's history stored once and compressed, restored exactly; older files load."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.methods.ark.api import ARK
from ark.runtime.records import Retrieval
from ark.runtime.trajectory_file import (
    FORMAT_VERSION,
    TrajectoryFormatError,
    pack_record,
    read_trajectory_file,
    unpack_record,
)
from ark.storage.jsonl import append_jsonl, read_jsonl
from tests.support.graphs import ONE_HOP, SHARED_FINDINGS, build_clinical_graph, build_index

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "trajectory-before-structured-results.jsonl"


@pytest.fixture(scope="module")
def clinical():
    graph = build_clinical_graph()
    return graph, build_index(graph)


@pytest.fixture(scope="module")
def retrievals(clinical, tmp_path_factory) -> tuple[list[Retrieval], Path]:
    graph, index = clinical
    path = tmp_path_factory.mktemp("runs") / "runs.jsonl"
    ark = ARK(graph, index=index, trajectory_path=path)
    return [ark.retrieve(q) for q in (ONE_HOP[0], SHARED_FINDINGS[0])], path


def show(path: Path, index: int = 0) -> str:
    result = CliRunner().invoke(app, ["trajectory", "show", str(path), "--index", str(index)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_records_round_trip_exactly_and_far_smaller(retrievals):
    results, path = retrievals
    lines = read_jsonl(path)
    assert [line["format"] for line in lines] == [FORMAT_VERSION] * 2
    assert all("agents" not in line and line["packed"]["field"] == "agents" for line in lines)
    for retrieval, line in zip(results, lines, strict=True):
        plain = retrieval.to_dict()
        assert unpack_record(line) == plain
        assert json.dumps(unpack_record(line), ensure_ascii=False) == json.dumps(plain, ensure_ascii=False)
        assert line["question"] == retrieval.question and line["fused_ids"] == retrieval.fused_ids  # readable
        assert len(json.dumps(line)) * 5 < len(json.dumps(plain))


def test_show_and_the_sft_and_reference_exports_are_unchanged(retrievals, tmp_path):
    results, path = retrievals
    plain = tmp_path / "plain.jsonl"
    append_jsonl(plain, [r.to_dict() for r in results])  # the same records written the old way
    for index in range(2):
        assert show(path, index) == show(plain, index)
    loaded = [Retrieval.from_dict(r) for r in read_jsonl(path)]
    assert [r.to_sft_samples() for r in loaded] == [r.to_sft_samples() for r in results]
    assert [r.to_reference_format() for r in loaded] == [r.to_reference_format() for r in results]
    assert [r.to_dict() for r in loaded] == [r.to_dict() for r in results]


def test_export_writes_records_reference_and_sft_samples(retrievals, tmp_path):
    results, path = retrievals
    for to, expected in (("records", [r.to_dict() for r in results]),
                         ("reference", [r.to_reference_format() for r in results]),
                         ("sft", [s for r in results for s in r.to_sft_samples()])):
        out = tmp_path / f"{to}.jsonl"
        done = CliRunner().invoke(app, ["trajectory", "export", str(path), "--out", str(out), "--to", to])
        assert done.exit_code == 0, done.output
        assert read_jsonl(out) == expected
    bad = CliRunner().invoke(app, ["trajectory", "export", str(path), "--out", str(tmp_path / "x"), "--to", "csv"])
    assert bad.exit_code == 2 and "valid: records, reference, sft" in bad.output


def test_files_written_before_format_2_load_and_pack_exactly():
    [record] = read_jsonl(FIXTURE)
    assert "format" not in record and unpack_record(record) is record
    assert unpack_record(json.loads(json.dumps(pack_record(record)))) == record
    assert read_trajectory_file(FIXTURE) == [record]


def test_steps_that_differ_from_their_messages_keep_their_own_values(retrievals):
    results, _ = retrievals
    record = copy.deepcopy(results[0].to_dict())
    step = record["agents"][0]["steps"][0]
    step["observations"][0] = "an observation the model never saw"
    step["tool_calls"][0]["arguments"] = '{"query": "edited"}'
    del step["content"]
    record["agents"][1]["messages"] = record["agents"][1]["messages"][:3]  # fewer messages than steps
    assert unpack_record(json.loads(json.dumps(pack_record(record)))) == record


def test_damaged_or_newer_records_are_clear_errors(retrievals, tmp_path):
    _, path = retrievals
    line = read_jsonl(path)[0]
    damaged = tmp_path / "damaged.jsonl"
    append_jsonl(damaged, [{**line, "packed": {**line["packed"], "data": line["packed"]["data"][:-40]}}])
    with pytest.raises(TrajectoryFormatError, match=rf"{damaged}, record 0: damaged packed trajectories"):
        read_trajectory_file(damaged)
    shown = CliRunner().invoke(app, ["trajectory", "show", str(damaged)])
    assert shown.exit_code == 2 and "damaged packed trajectories" in shown.output and shown.output.count("\n") == 1
    with pytest.raises(TrajectoryFormatError, match="format 3 is not one this version of ARK reads"):
        unpack_record({**line, "format": 3})
