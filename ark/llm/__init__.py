"""Chat back-ends behind one `ChatPolicy` interface: the OpenAI-compatible client (retries, cache, usage,
concurrency limit) and its settings.

The client is exported lazily: importing the ``openai`` SDK costs most of a second, and commands that run the
offline policy (or only need :class:`ChatPolicy`) never pay it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ark.llm.cache import ResponseCache, request_key
from ark.llm.policy import ChatPolicy, LLMError, PolicyReply, Usage
from ark.llm.settings import LLMSettings, ark_home, resolve_settings

if TYPE_CHECKING:
    from ark.llm.openai_client import OpenAIChatClient

__all__ = [
    "ChatPolicy",
    "LLMError",
    "LLMSettings",
    "OpenAIChatClient",
    "PolicyReply",
    "ResponseCache",
    "Usage",
    "ark_home",
    "request_key",
    "resolve_settings",
]


def __getattr__(name: str) -> Any:
    if name == "OpenAIChatClient":
        from ark.llm.openai_client import OpenAIChatClient

        return OpenAIChatClient
    raise AttributeError(f"module 'ark.llm' has no attribute {name!r}")
