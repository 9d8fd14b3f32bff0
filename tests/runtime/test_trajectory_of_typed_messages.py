"""Trajectory files written by main when messages had become typed records but steps still kept copies of them
(``tests/fixtures/trajectory-main-typed-messages.jsonl``, written with main at 71a4c29 on the clinical test graph:
two offline questions of two agents, packed; a scripted agent's refused calls, a turn without a call and its
corrective, packed and as a plain record) load, write back byte for byte, and hold the conversation once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ark.llm.messages import AssistantMessage, ToolMessage, UserMessage
from ark.runtime.records import Retrieval, Trajectory
from ark.runtime.tools import INVALID_JSON, UNKNOWN_NODE, UNKNOWN_TOOL
from ark.runtime.trajectory_file import pack_record, unpack_record
from ark.storage.jsonl import read_jsonl

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "trajectory-main-typed-messages.jsonl"


@pytest.fixture(scope="module")
def lines() -> list[dict]:
    return read_jsonl(FIXTURE)


def test_each_record_loads_and_writes_back_the_same_json(lines):
    assert [line.get("format") for line in lines] == [2, 2, 2, None]
    for line in lines:
        plain = unpack_record(line)
        again = Retrieval.from_dict(line).to_dict()
        assert json.dumps(again, ensure_ascii=False) == json.dumps(plain, ensure_ascii=False)
        assert json.dumps(pack_record(again), ensure_ascii=False) == json.dumps(pack_record(plain), ensure_ascii=False)


def test_a_loaded_step_holds_its_turns_messages_not_copies(lines):
    for line in lines:
        for agent in Retrieval.from_dict(line).trajectories:
            held = {id(m) for m in agent.messages}
            assert agent.steps
            for step in agent.steps:
                assert id(step.message) in held and all(id(answer) in held for answer in step.answers)
                for call, wire in zip(step.tool_calls, step.message.tool_calls, strict=True):
                    assert call.call is wire and call.answer is not None and id(call.answer) in held
                    assert call.answer.tool_call_id == call.id
                if step.corrective is not None:
                    assert id(step.corrective_message) in held


def test_the_refusals_corrective_and_results_read_back(lines):
    agent = Retrieval.from_dict(lines[3]).trajectories[0]
    errors = [call.error for step in agent.steps for call in step.tool_calls]
    assert errors[:4] == [None, INVALID_JSON, UNKNOWN_TOOL, UNKNOWN_NODE]
    refused = agent.steps[0].tool_calls[1]
    assert refused.result == {"error": INVALID_JSON} and refused.answer.result == refused.result
    assert agent.steps[2].tool_calls == [] and agent.steps[2].corrective.startswith("You must call one of the tools")
    searched = agent.steps[0].tool_calls[0]
    assert searched.result["results"] and searched.answer.content == agent.steps[0].observations[0]


def test_an_edit_to_a_message_is_what_the_step_writes():
    """One copy: changing a tool message's text changes the step's observation, as the model saw it."""
    agent = Retrieval.from_dict(read_jsonl(FIXTURE)[3]).trajectories[0]
    answer = next(m for m in agent.messages if isinstance(m, ToolMessage))
    answer.content = "edited"
    assert agent.steps[0].to_dict()["observations"][0] == "edited"
    assistant = next(m for m in agent.messages if isinstance(m, AssistantMessage))
    assistant.content = "new thought"
    assert agent.to_dict()["steps"][0]["content"] == "new thought"


def test_steps_that_differ_from_the_messages_keep_their_own_copies(lines):
    record = unpack_record(lines[3])
    agent = dict(record["agents"][0])
    agent["steps"] = [dict(agent["steps"][0], observations=["not what the model saw", "x"]), *agent["steps"][1:]]
    trajectory = Trajectory.from_dict(agent)
    assert trajectory.to_dict() == agent
    assert trajectory.steps[0].answers[0] not in trajectory.messages  # its own copy
    assert trajectory.steps[1].message is next(m for m in trajectory.messages[3:] if isinstance(m, AssistantMessage))
    assert isinstance(trajectory.steps[2].corrective_message, UserMessage)
