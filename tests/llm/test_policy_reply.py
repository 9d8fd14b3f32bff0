"""A reply is a typed assistant message: back-ends make records, a plugin's wire dict is read into one (its
in-memory ``data`` kept, never sent), and the tool loop gives ids to calls that came without one."""

from __future__ import annotations

import asyncio

from ark.llm.messages import AssistantMessage, SystemMessage, ToolCall, UserMessage
from ark.llm.policy import PolicyReply, Usage
from ark.runtime.loop import run_tool_loop
from ark.runtime.records import Trajectory
from ark.runtime.tools import CallTelemetry, ToolResult


def test_a_wire_dict_reply_becomes_a_record_with_its_in_memory_data():
    reply = PolicyReply({"role": "assistant", "content": "look", "data": {"expected_call_shape": "x"},
                         "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]})
    assert isinstance(reply.message, AssistantMessage) and reply.message.data == {"expected_call_shape": "x"}
    assert reply.message.tool_calls == [ToolCall("", "f", '{"a": 1}')]  # arguments as the protocol's JSON text
    assert "data" not in reply.message.to_openai()


class Once:
    name = "scripted"

    def __init__(self, *messages: AssistantMessage | dict) -> None:
        self.messages = list(messages)

    async def next_message(self, messages, tools, *, agent_index=0, tool_choice="required") -> PolicyReply:
        return PolicyReply(self.messages.pop(0), Usage())

    async def aclose(self) -> None:
        return None


class Echo:
    finished = False
    telemetry = CallTelemetry()

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        self.finished = True
        return ToolResult(f"ran {name}")


def test_the_loop_gives_calls_without_an_id_one_and_the_step_holds_the_messages():
    calls = [{"type": "function", "function": {"name": "a", "arguments": "{}"}},
             {"id": "given", "type": "function", "function": {"name": "b", "arguments": "{}"}}]
    trajectory = Trajectory("q", messages=[SystemMessage("s"), UserMessage("q")])
    asyncio.run(run_tool_loop(trajectory, Once({"role": "assistant", "content": None, "tool_calls": calls}), Echo(),
                              max_steps=2))
    [step] = trajectory.steps
    assert [call.id for call in step.tool_calls] == ["call_0_0", "given"]
    assert step.message is trajectory.messages[2]
    assert all(held is sent for held, sent in zip(step.answers, trajectory.messages[3:5], strict=True))
    assert [m.tool_call_id for m in step.answers] == ["call_0_0", "given"]
    assert step.observations == ["ran a", "ran b"] and trajectory.stop_reason == "finish"
