"""The conversation as typed records: :class:`SystemMessage`, :class:`UserMessage`, :class:`AssistantMessage` (text
and :class:`ToolCall` s) and :class:`ToolMessage` (the observation text and the tool's typed result).

Each record's :meth:`to_openai` is the one place an OpenAI-format wire dict is made (what is sent, cached, stored
and trained on): it writes only the protocol's keys, in the order :data:`WIRE_KEYS` gives them, so a record
written before messages were typed (a plain dict) and one written now are the same JSON. What ARK keeps beside the
wire text stays in memory: the context of the first user message (the question a scripted policy reads) and the
typed result of each tool message. :func:`as_message` reads a wire dict back (trajectory files, a caller passing
dicts to a policy).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# The keys of a chat message in the OpenAI protocol, in the order the wire dicts hold them.
WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


@dataclass
class ToolCall:
    """One tool call of an assistant message; ``arguments`` is the raw JSON string exactly as sent."""

    id: str
    name: str
    arguments: str
    type: str = "function"

    def to_openai(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "function": {"name": self.name, "arguments": self.arguments}}

    @classmethod
    def from_openai(cls, call: Mapping[str, Any], default_id: str = "") -> ToolCall:
        """A call of a wire message; arguments that are not a string (some back-ends send objects) as JSON."""
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        return cls(str(call.get("id") or default_id), str(function.get("name") or ""), arguments,
                   str(call.get("type") or "function"))


@dataclass
class SystemMessage:
    content: str
    name: str | None = None
    role: Literal["system"] = "system"

    def to_openai(self) -> dict[str, Any]:
        return _wire(self.role, self.content, name=self.name)


@dataclass
class UserMessage:
    """A user turn; ``context`` is what ARK keeps beside it and never sends (e.g. ``{"question": ...}``)."""

    content: str
    context: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    role: Literal["user"] = "user"

    def to_openai(self) -> dict[str, Any]:
        return _wire(self.role, self.content, name=self.name)


@dataclass
class AssistantMessage:
    """A model turn: its text (None when it only called tools) and its tool calls."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    name: str | None = None
    role: Literal["assistant"] = "assistant"
    # what the back-end noted in memory (e.g. the tool-call shape it expected); never sent nor stored
    data: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def to_openai(self) -> dict[str, Any]:
        calls = [call.to_openai() for call in self.tool_calls] if self.tool_calls else None
        return _wire(self.role, self.content, tool_calls=calls, name=self.name)

    @classmethod
    def from_openai(cls, message: Mapping[str, Any], id_prefix: str | None = None) -> AssistantMessage:
        """A back-end's wire reply (or a cached one) as a record: calls without an id get ``{id_prefix}_{k}``
        (none: they keep an empty id, which the tool loop fills in), arguments that are not a string become JSON,
        and the in-memory ``data`` a back-end noted (never sent) is kept."""
        calls = [ToolCall.from_openai(call, "" if id_prefix is None else f"{id_prefix}_{k}")
                 for k, call in enumerate(message.get("tool_calls") or []) if isinstance(call, Mapping)]
        data = message.get("data")
        content = message.get("content")
        return cls(content if content is None else str(content), calls, name=message.get("name"),
                   data=dict(data) if isinstance(data, Mapping) else None)


@dataclass
class ToolMessage:
    """A tool's answer to one call: ``content`` for the model, ``result`` the typed result ARK reads instead."""

    tool_call_id: str
    content: str
    result: object = None  # the tool's result model (runtime.tools.ToolData); the dict a file holds when read back
    name: str | None = None
    role: Literal["tool"] = "tool"

    def to_openai(self) -> dict[str, Any]:
        return _wire(self.role, self.content, tool_call_id=self.tool_call_id, name=self.name)


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage


def _wire(role: str, content: Any, **keys: Any) -> dict[str, Any]:
    """The wire dict: ``role`` and ``content`` always, the other protocol keys when set, in :data:`WIRE_KEYS`
    order."""
    out: dict[str, Any] = {"role": role, "content": content}
    out.update((key, keys[key]) for key in WIRE_KEYS[2:] if keys.get(key) is not None)
    return out


def as_message(message: Message | Mapping[str, Any]) -> Message:
    """``message`` as a record: records as they are, a wire dict read by its role (a ``data`` key, ARK's
    in-memory extra of older code, becomes the context or result)."""
    if not isinstance(message, Mapping):
        return message
    role, content, name = message.get("role"), message.get("content"), message.get("name")
    if role == "system":
        return SystemMessage(str(content or ""), name=name)
    if role == "user":
        return UserMessage(str(content or ""), dict(message.get("data") or {}), name=name)
    if role == "assistant":
        calls = [ToolCall.from_openai(call) for call in message.get("tool_calls") or [] if isinstance(call, Mapping)]
        return AssistantMessage(content, calls, name=name)
    if role == "tool":
        return ToolMessage(str(message.get("tool_call_id") or ""), str(content or ""), message.get("data"), name=name)
    raise ValueError(f"unknown chat message role {role!r}: expected system, user, assistant or tool")


def to_openai(messages: Iterable[Message | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The wire dicts of ``messages`` (records or dicts)."""
    return [as_message(message).to_openai() for message in messages]
