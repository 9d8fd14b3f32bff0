"""Chat back-ends behind one `ChatPolicy` interface: the OpenAI-compatible client (retries, cache, usage,
concurrency limit) and its settings."""

from ark.llm.cache import ResponseCache, request_key
from ark.llm.openai_client import OpenAIChatClient
from ark.llm.policy import ChatPolicy, LLMError, PolicyReply, Usage
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
