"""Chat back-ends behind one `ChatPolicy` interface: the OpenAI-compatible client (retries, cache, usage,
concurrency limit) and its settings.

The client, the settings and the cache are exported lazily: importing the ``openai`` SDK costs most of a second,
and commands that run the offline policy (or only need :class:`ChatPolicy`) never pay for any of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ark.llm.policy import ChatPolicy, LLMError, PolicyReply, Usage

if TYPE_CHECKING:
    from ark.llm.cache import ResponseCache, request_key
    from ark.llm.openai_client import OpenAIChatClient
    from ark.llm.settings import LLMSettings, ark_home, resolve_settings

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


_LAZY = {"OpenAIChatClient": "ark.llm.openai_client", "ResponseCache": "ark.llm.cache", "request_key": "ark.llm.cache",
         "LLMSettings": "ark.llm.settings", "ark_home": "ark.llm.settings", "resolve_settings": "ark.llm.settings"}


def __getattr__(name: str) -> Any:
    # The settings (a pydantic model and the TOML parser) and the cache load on first use too: the offline policy
    # needs only ChatPolicy and its records.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ark.llm' has no attribute {name!r}")
