"""Chat messages as records: the wire dict each writes (the protocol's keys only, in the order files have always
held them), reading wire dicts back, and what stays private."""

from __future__ import annotations

import json

import pytest

from ark.llm.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    as_message,
    to_openai,
)


def test_each_record_writes_the_protocol_keys_in_the_files_order_and_nothing_private():
    conversation = [SystemMessage("rules"), UserMessage("q?", context={"question": "q?"}),
                    AssistantMessage(None, [ToolCall("c1", "search_in_graph", '{"query": "x"}')]),
                    ToolMessage("c1", "Found 1 node", result={"results": [{"index": 3}]}),
                    AssistantMessage("done")]
    wire = to_openai(conversation)
    assert json.dumps(wire) == json.dumps([
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "q?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search_in_graph", "arguments": '{"query": "x"}'}}]},
        {"role": "tool", "content": "Found 1 node", "tool_call_id": "c1"},
        {"role": "assistant", "content": "done"},
    ])
    assert [as_message(m).to_openai() for m in wire] == wire


def test_a_wire_dict_with_arks_older_private_key_reads_back_as_a_record():
    user = as_message({"role": "user", "content": "q", "data": {"question": "q"}})
    tool = as_message({"role": "tool", "tool_call_id": "c1", "content": "obs", "data": {"results": []}})
    call = as_message({"role": "assistant", "content": None,
                       "tool_calls": [{"id": "c2", "function": {"name": "finish", "arguments": {"a": 1}}}]})
    assert isinstance(user, UserMessage) and user.context == {"question": "q"}
    assert isinstance(tool, ToolMessage) and tool.result == {"results": []}
    assert isinstance(call, AssistantMessage) and call.tool_calls == [ToolCall("c2", "finish", '{"a": 1}')]


def test_an_unknown_role_is_refused_naming_it_and_the_valid_ones():
    with pytest.raises(ValueError, match="'robot'.*system, user, assistant or tool"):
        as_message({"role": "robot", "content": "x"})
