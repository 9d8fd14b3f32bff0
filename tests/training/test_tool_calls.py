"""Parsing a model's <tool_call> blocks into OpenAI-format calls, including what broken output becomes."""

from __future__ import annotations

import json

import pytest

from ark.llm.tool_calls import parse_tool_calls


def test_calls_become_openai_calls_with_json_string_arguments():
    text = ('Look first.\n<tool_call>\n{"name": "search_in_graph", "arguments": {"query": "Marfan", "size": 5}}\n'
            '</tool_call>\n<tool_call>\n{"name": "finish", "arguments": {}}\n</tool_call>')
    message = parse_tool_calls(text, id_prefix="c")
    assert message["content"] == "Look first."
    calls = message["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["search_in_graph", "finish"]
    assert [c["id"] for c in calls] == ["c_0", "c_1"] and all(c["type"] == "function" for c in calls)
    assert json.loads(calls[0]["function"]["arguments"]) == {"query": "Marfan", "size": 5}
    assert calls[1]["function"]["arguments"] == "{}"


def test_plain_text_has_no_tool_calls_and_thinking_is_dropped():
    message = parse_tool_calls("<think>\nhmm\n</think>\n\nI am done.")
    assert message == {"role": "assistant", "content": "I am done."}
    assert parse_tool_calls("")["content"] is None


def test_broken_json_keeps_the_name_and_passes_raw_arguments_on():
    message = parse_tool_calls('<tool_call>\n{"name": "search_in_graph", "arguments": {"query": "Marfan}\n'
                               '</tool_call>')
    (call,) = message["tool_calls"]
    assert call["function"]["name"] == "search_in_graph"
    raw = call["function"]["arguments"]
    assert raw.startswith('{"query": "Marfan')
    try:
        json.loads(raw)
        raise AssertionError("arguments should stay unparseable so the loop reports them")
    except json.JSONDecodeError:
        pass


def test_a_call_without_a_readable_name_stays_as_text():
    text = "Trying.\n<tool_call>\nsearch for Marfan please\n</tool_call>"
    message = parse_tool_calls(text)
    assert "tool_calls" not in message
    assert "search for Marfan please" in message["content"] and "<tool_call>" in message["content"]


def test_an_unclosed_call_cut_by_the_token_limit_is_still_read():
    message = parse_tool_calls('<tool_call>\n{"name": "finish", "arguments": {"comment": "ok"}}')
    assert message["tool_calls"][0]["function"]["name"] == "finish"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"comment": "ok"}


@pytest.mark.parametrize("arguments", ['{"q": ' + "[" * 5000 + "]" * 5000 + "}", '{"k": ' + "7" * 5000 + "}"],
                         ids=["nested", "long-integer"])
def test_a_block_the_json_reader_refuses_keeps_its_name_and_raw_arguments(arguments):
    message = parse_tool_calls(f'<tool_call>{{"name": "search", "arguments": {arguments}}}</tool_call>')
    (call,) = message["tool_calls"]
    assert call["function"]["name"] == "search" and call["function"]["arguments"] == arguments
