"""The interface every chat back-end implements (`ChatPolicy`), its reply type and token usage."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ark.errors import ArkError
from ark.llm.messages import AssistantMessage, Message

# The most tool calls of one reply that the tool loop runs (a policy's ``max_tool_calls_per_turn``, the [llm] setting
# of the same name); the rest are answered with an observation, not run.
DEFAULT_MAX_TOOL_CALLS_PER_TURN = 32


class LLMError(RuntimeError, ArkError):
    """A chat request failed for good (bad key, unknown model, bad request, retries exhausted)."""


@dataclass
class Usage:
    """Token counts of one or more chat calls; add them with ``+``."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens,
                     self.total_tokens + other.total_tokens)

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens}


@dataclass
class PolicyReply:
    """One assistant turn.

    ``message`` is the assistant message as a record (:class:`~ark.llm.messages.AssistantMessage`: its text, its
    :class:`~ark.llm.messages.ToolCall` s with ``arguments`` the raw JSON string exactly as the model sent it,
    possibly malformed); an OpenAI-format wire dict given instead (a plugin's back-end) is read into one. A call
    without an id gets one from the tool loop.

    Whoever reads the reply calls :meth:`accept` once it has parsed it; a caching back-end stores the reply only
    then, so a reply that breaks its reader is asked for again on the next run instead of failing it for good.
    """

    message: AssistantMessage
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    latency_s: float = 0.0
    on_accept: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.message, Mapping):  # a wire dict (a plugin's back-end, written before records)
            self.message = AssistantMessage.from_openai(self.message)

    def accept(self) -> None:
        """The reader has parsed the reply: let the back-end keep it (once; later calls do nothing)."""
        hook, self.on_accept = self.on_accept, None
        if hook is not None:
            hook()


@runtime_checkable
class ChatPolicy(Protocol):
    """Chooses the next assistant message given the conversation so far (typed records, see
    :mod:`ark.llm.messages`; a back-end that sends them makes the wire dicts with ``to_openai``; callers that
    pass wire dicts still work where back-ends read them through ``as_message``) and the tool schemas. A policy
    may also have ``max_tool_calls_per_turn`` (the most tool calls of one reply the loop runs; see
    :mod:`ark.runtime.loop`)."""

    name: str

    async def next_message(self, messages: Sequence[Message], tools: list[dict], *, agent_index: int = 0,
                           tool_choice: str = "required") -> PolicyReply: ...

    async def aclose(self) -> None: ...
