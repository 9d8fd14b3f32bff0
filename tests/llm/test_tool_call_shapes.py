"""The local (in-process ``hf:``) path reads the tool-call shapes real small models write, and a reply in none of
them gets an observation naming the expected shape.

The fenced reply is Qwen2.5-Coder-0.5B-Instruct's, recorded in issue 48 (``tests/fixtures/tool_call_shapes``); the
other shapes are those the models' own chat templates ask for (Llama 3.2: a bare ``{"name", "parameters"}`` object;
Llama 3.1: ``<function=NAME>``; Mistral: ``[TOOL_CALLS]`` and a list), written here as such models write them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ark.llm.policy import PolicyReply
from ark.llm.tool_calls import EXPECTED_SHAPE_KEY, parse_tool_calls
from ark.methods.ark.loop import NO_TOOL_CALL_MESSAGE, run_agent
from ark.methods.ark.options import ArkOptions
from ark.methods.ark.tools import TOOL_NAMES, Toolbox
from tests.support.graphs import build_clinical_graph, build_index

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tool_call_shapes"
MARFAN = {"query": "Marfan syndrome", "size": 30}


def calls_of(text: str) -> list[tuple[str, dict]]:
    message = parse_tool_calls(text, tool_names=TOOL_NAMES)
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls", [])]


def test_qwen_coders_recorded_fenced_json_is_a_call():
    text = (FIXTURES / "qwen2.5-coder-0.5b-fenced-json.txt").read_text()
    message = parse_tool_calls(text, tool_names=TOOL_NAMES)
    assert calls_of(text) == [("search_in_graph", MARFAN)]
    assert message["content"] is None and "data" not in message  # the fence was the call, nothing is left


@pytest.mark.parametrize("text", [
    '<tool_call>\n{"name": "search_in_graph", "arguments": {"query": "Marfan syndrome", "size": 30}}\n</tool_call>',
    'I will search first.\n{"name": "search_in_graph", "parameters": {"query": "Marfan syndrome", "size": 30}}',
    '[TOOL_CALLS] [{"name": "search_in_graph", "arguments": {"query": "Marfan syndrome", "size": 30}}]',
    '<function=search_in_graph>{"query": "Marfan syndrome", "size": 30}</function>',
    '```\n{"type": "function", "function": {"name": "search_in_graph", "arguments": '
    '"{\\"query\\": \\"Marfan syndrome\\", \\"size\\": 30}"}}\n```',
], ids=["hermes", "bare-parameters", "mistral-list", "llama31-function-tag", "openai-function-object"])
def test_each_shape_small_models_write_is_read_as_the_same_call(text):
    assert calls_of(text) == [("search_in_graph", MARFAN)]


def test_json_naming_no_offered_tool_is_text_and_the_reply_says_which_shape_was_expected():
    text = 'The answer is {"name": "Marfan syndrome", "arguments": {}} and ```json\n{"size": 3}\n```'
    message = parse_tool_calls(text, tool_names=TOOL_NAMES)
    assert "tool_calls" not in message and message["content"] == text
    expected = message["data"][EXPECTED_SHAPE_KEY]
    assert '<tool_call>{"name": "search_in_graph", "arguments": {...}}</tool_call>' in expected
    assert all(name in expected for name in TOOL_NAMES)


def test_two_bare_calls_in_one_reply_are_both_read():
    text = ('{"name": "search_in_graph", "arguments": {"query": "Marfan syndrome", "size": 30}}\n'
            '{"name": "finish", "arguments": {}}')
    assert calls_of(text) == [("search_in_graph", MARFAN), ("finish", {})]


class TextModel:
    """A local back-end's reading of fixed generated texts (what ``LocalChatClient.next_message`` returns)."""

    name = "local:recorded"

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    async def next_message(self, messages, tools, *, agent_index=0, tool_choice="required") -> PolicyReply:
        names = [t["function"]["name"] for t in tools]
        return PolicyReply(parse_tool_calls(self.texts.pop(0), tool_names=names))


def test_the_agent_runs_the_fenced_call_and_corrects_a_reply_it_cannot_read_with_the_expected_shape():
    graph = build_clinical_graph()
    index = build_index(graph)
    fenced = (FIXTURES / "qwen2.5-coder-0.5b-fenced-json.txt").read_text()
    model = TextModel(fenced, "I think the answer is FBN1.", '```json\n{"name": "finish", "arguments": {}}\n```')
    trajectory = asyncio.run(run_agent("Which genes cause Marfan syndrome?", lambda: Toolbox(graph, index), model,
                                       config=ArkOptions(max_steps=3)))
    first, unread, done = trajectory.steps
    assert [c.name for c in first.tool_calls] == ["search_in_graph"] and first.tool_calls[0].parsed_ok
    assert "Marfan syndrome" in first.observations[0]
    correction = next(m.content for m in trajectory.messages if m.role == "user"
                      and "No tool call could be read" in str(m.content))
    assert "<tool_call>" in correction and correction.endswith(NO_TOOL_CALL_MESSAGE)
    assert trajectory.stop_reason == "finish" and [c.name for c in done.tool_calls] == ["finish"]
