"""Tool calls in generated text → OpenAI format, in the shapes real small models write.

1. ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks: the Hermes / Qwen2.5 / Qwen3 convention (what
   vLLM's ``hermes`` parser reads) and the one our tiny models' template writes.
2. Where a reply has no such block and the offered tool names are known: a JSON object naming an offered tool, with
   ``arguments`` or ``parameters`` (or OpenAI's ``{"function": {"name", "arguments"}}``), alone or in a list, in a
   fenced ```` ```json ```` block or bare in the text (Qwen2.5-Coder writes the fenced form; Llama 3.2's own template
   asks for the bare ``{"name": ..., "parameters": ...}``; Mistral's prefixes a list with ``[TOOL_CALLS]``), and
   Llama 3.1's ``<function=NAME>{...}</function>``. An object naming no offered tool is text, not a call.

A reply with none of these gets :func:`expected_call_shape` in its message's in-memory ``data`` so the agent loop
can say which shape was expected.

Parsing never raises: a block that is not valid JSON keeps its name (when one can be read) and passes its raw
arguments through, so the agent loop answers with an "invalid arguments" observation; a block without a readable name
is dropped as a call and its raw text stays in the message content, so the loop's "call a tool" correction applies.
Hand-written because transformers' response parsers only exist for some templates and raise on malformed output;
this one must degrade gracefully on any model's text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from typing import Any

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
_BLOCK = re.compile(re.escape(CALL_OPEN) + r"(.*?)(?:" + re.escape(CALL_CLOSE) + r"|\Z)", re.DOTALL)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_ARGUMENTS = re.compile(r'"arguments"\s*:\s*(.*)', re.DOTALL)
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_FUNCTION_TAG = re.compile(r"<function=([A-Za-z0-9_.-]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_MARKERS = ("[TOOL_CALLS]", "<|python_tag|>")
EXPECTED_SHAPE_KEY = "expected_call_shape"  # the in-memory ``data`` key of a reply in which no call could be read


def _one_call(body: str, call_id: str) -> dict[str, Any] | None:
    """One OpenAI-format call from a block's body, or None when no tool name can be read."""
    text = body.strip()
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):  # invalid JSON, an over-long integer, nesting past the recursion limit
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("name"), str) and parsed["name"]:
        arguments = parsed.get("arguments", parsed.get("parameters", {}))
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        return {"id": call_id, "type": "function", "function": {"name": parsed["name"], "arguments": raw}}
    name = _NAME.search(text)
    if name is None:
        return None
    # Unparseable JSON: keep what follows "arguments" (minus the object's closing brace) for the loop to reject.
    match = _ARGUMENTS.search(text)
    raw = match.group(1).strip() if match else ""
    if raw.endswith("}") and raw.count("{") < raw.count("}"):
        raw = raw[:-1].rstrip()
    return {"id": call_id, "type": "function", "function": {"name": name.group(1), "arguments": raw}}


def offered_names(tools: Iterable[dict[str, Any]]) -> list[str]:
    """The tool names of OpenAI-format ``tools`` entries."""
    return [str(t.get("function", {}).get("name", "")) for t in tools if t.get("function", {}).get("name")]


def expected_call_shape(tool_names: Iterable[str]) -> str:
    """The one sentence telling a model how to write a call it could not be read from (an example per tool name)."""
    names = list(tool_names)
    example = names[0] if names else "TOOL_NAME"
    return (f'No tool call could be read from your reply. Write each call as <tool_call>{{"name": "{example}", '
            f'"arguments": {{...}}}}</tool_call>, naming one of the tools ({", ".join(names)}).')


def _as_call(value: Any, tools: Collection[str]) -> tuple[str, Any] | None:
    """(name, arguments) when ``value`` is a JSON object naming an offered tool, else None."""
    if not isinstance(value, dict):
        return None
    inner = value.get("function")
    if isinstance(inner, dict):
        value = inner
    name = value.get("name")
    if not isinstance(name, str) or name not in tools:
        return None
    return name, value.get("arguments", value.get("parameters", {}))


def _calls_in(value: Any, tools: Collection[str]) -> list[tuple[str, Any]] | None:
    """The calls a decoded JSON value holds (an object or a list of objects), or None when it is not all calls."""
    items = value if isinstance(value, list) else [value]
    calls = [_as_call(item, tools) for item in items]
    if not items or any(call is None for call in calls):
        return None
    return [call for call in calls if call is not None]


def _json_calls(text: str, tools: Collection[str]) -> tuple[list[tuple[str, Any]], list[tuple[int, int]]]:
    """Calls written as JSON in ``text`` (fenced blocks first, else bare values) and the spans they took."""
    decoder = json.JSONDecoder()
    found: list[tuple[str, Any]] = []
    spans: list[tuple[int, int]] = []
    for fence in _FENCE.finditer(text):
        try:
            calls = _calls_in(json.loads(fence.group(1).strip()), tools)
        except (ValueError, RecursionError):
            calls = None
        if calls:
            found += calls
            spans.append(fence.span())
    if found:
        return found, spans
    position = 0
    while (start := _next_json_start(text, position)) >= 0:
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            position = start + 1
            continue
        calls = _calls_in(value, tools)
        if calls:
            found += calls
            spans.append((start, end))
        position = end if calls else start + 1
    return found, spans


def _next_json_start(text: str, position: int) -> int:
    starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
    return min(starts) if starts else -1


def _fallback_calls(text: str, tools: Collection[str]) -> tuple[list[tuple[str, Any]], str]:
    """Calls in the other shapes of the module doc, and the text left outside them."""
    tagged = [(m.group(1), m.group(2).strip()) for m in _FUNCTION_TAG.finditer(text) if m.group(1) in tools]
    if tagged:
        return tagged, _FUNCTION_TAG.sub("", text)
    calls, spans = _json_calls(text, tools)
    for start, end in reversed(spans):
        text = text[:start] + text[end:]
    for marker in _MARKERS if calls else ():
        text = text.replace(marker, "")
    return calls, text


def _openai_call(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def parse_tool_calls(text: str, id_prefix: str = "call", tool_names: Collection[str] | None = None) -> dict[str, Any]:
    """An OpenAI-format assistant message from generated ``text``.

    ``content`` is the text outside the tool-call blocks (a ``<think>`` block removed; None when empty) plus the raw
    text of any block whose tool name could not be read; ``tool_calls`` (absent when none) carry ``arguments`` as
    JSON strings. With ``tool_names`` (the offered tools), a reply without ``<tool_call>`` blocks is read in the
    other shapes of the module doc; one with no call at all carries :func:`expected_call_shape` in ``data``.
    """
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    position = 0
    for block in _BLOCK.finditer(text):
        kept.append(text[position:block.start()])
        position = block.end()
        call = _one_call(block.group(1), f"{id_prefix}_{len(calls)}")
        if call is None:
            kept.append(block.group(0))
        else:
            calls.append(call)
    kept.append(text[position:])
    rest = "".join(kept)
    if not calls and tool_names:
        found, rest = _fallback_calls(_THINK.sub("", rest), tool_names)
        calls = [_openai_call(name, arguments, f"{id_prefix}_{i}") for i, (name, arguments) in enumerate(found)]
    content = _THINK.sub("", rest).strip()
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = calls
    elif tool_names:
        message["data"] = {EXPECTED_SHAPE_KEY: expected_call_shape(tool_names)}
    return message
