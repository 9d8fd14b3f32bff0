"""The chat messages the offline policy reads and writes: the question beside the first user message, and
assistant messages with tool calls in the OpenAI format the agent loop expects."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ....llm.messages import AssistantMessage, Message, ToolCall, UserMessage


def question_of(messages: Sequence[Message]) -> str:
    """The question, as the agent loop records it beside the first user message."""
    for message in messages:
        if isinstance(message, UserMessage):
            return str(message.context.get("question") or message.content or "").strip()
    return ""


def assistant_message(note: str, calls: Sequence[tuple[str, Mapping[str, object]]], salt: int) -> AssistantMessage:
    """The assistant message making ``calls`` (tool name, arguments), ids salted per agent and step."""
    tool_calls = [ToolCall(f"call_{salt}_{n}", name, json.dumps(args, ensure_ascii=False))
                  for n, (name, args) in enumerate(calls)]
    return AssistantMessage(note, tool_calls)
