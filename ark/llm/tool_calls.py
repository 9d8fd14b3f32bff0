"""Tool calls in generated text: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks → OpenAI format.

This is the Hermes / Qwen2.5 / Qwen3 convention (what vLLM's ``hermes`` parser reads) and the one our tiny models'
template writes. Parsing never raises: a block that is not valid JSON keeps its name (when one can be read) and
passes its raw arguments through, so the agent loop answers with an "invalid arguments" observation; a block without
a readable name is dropped as a call and its raw text stays in the message content, so the loop's "call a tool"
correction applies. Hand-written because transformers' response parsers only exist for some templates and raise on
malformed output; this one must degrade gracefully on any model's text.
"""

from __future__ import annotations

import json
import re
from typing import Any

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
_BLOCK = re.compile(re.escape(CALL_OPEN) + r"(.*?)(?:" + re.escape(CALL_CLOSE) + r"|\Z)", re.DOTALL)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_ARGUMENTS = re.compile(r'"arguments"\s*:\s*(.*)', re.DOTALL)


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


def parse_tool_calls(text: str, id_prefix: str = "call") -> dict[str, Any]:
    """An OpenAI-format assistant message from generated ``text``.

    ``content`` is the text outside the tool-call blocks (a ``<think>`` block removed; None when empty) plus the raw
    text of any block whose tool name could not be read; ``tool_calls`` (absent when none) carry ``arguments`` as
    JSON strings.
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
    content = _THINK.sub("", "".join(kept)).strip()
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = calls
    return message
