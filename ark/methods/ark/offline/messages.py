"""The chat messages the offline policy reads and writes: the question beside the first user message, and
assistant messages with tool calls in the OpenAI format the agent loop expects."""

from __future__ import annotations

import json
from typing import Any


def question_of(messages: list[dict]) -> str:
    """The question, as the agent loop records it beside the first user message."""
    for message in messages:
        if message.get("role") == "user":
            return str((message.get("data") or {}).get("question") or message.get("content") or "").strip()
    return ""


def assistant_message(note: str, calls: list[tuple[str, dict[str, Any]]], salt: int) -> dict:
    """The assistant message making ``calls`` (tool name, arguments), ids salted per agent and step."""
    return {
        "role": "assistant",
        "content": note,
        "tool_calls": [
            {
                "id": f"call_{salt}_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
            for n, (name, args) in enumerate(calls)
        ],
    }
