"""A trajectory file written by main before messages were typed records
(``tests/fixtures/trajectory-main-before-typed-messages.jsonl``: two offline questions on the clinical test graph)
loads, and writes back byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from ark.runtime.records import Retrieval
from ark.runtime.trajectory_file import pack_record, read_trajectory_file, unpack_record
from ark.storage.jsonl import read_jsonl

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "trajectory-main-before-typed-messages.jsonl"


def test_the_file_loads_and_writes_back_the_same_json():
    lines = read_jsonl(FIXTURE)
    assert len(lines) == 2
    for line in lines:
        plain = unpack_record(line)
        retrieval = Retrieval.from_dict(line)
        again = retrieval.to_dict()
        assert json.dumps(again, ensure_ascii=False) == json.dumps(plain, ensure_ascii=False)
        assert json.dumps(pack_record(again), ensure_ascii=False) == json.dumps(line, ensure_ascii=False)


def test_the_loaded_conversation_holds_the_calls_and_their_observations():
    retrieval = Retrieval.from_dict(next(iter(read_trajectory_file(FIXTURE))))
    agent = retrieval.trajectories[0]
    calls = [call for step in agent.steps for call in step.tool_calls]
    assert calls and calls[-1].name == "finish"
    wire = [m for m in agent.to_dict()["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in wire] == [call.id for call in calls]
    assert [m["content"] for m in wire] == [o for step in agent.steps for o in step.observations]
    assert any(call.result and call.result.get("results") for call in calls)
