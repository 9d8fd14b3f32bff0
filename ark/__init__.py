"""ARK: evidence retrieval from text-rich knowledge graphs with language-model agents.

    from ark import ARK, open_graph
    graph = open_graph("hpo")
    result = ARK(graph).retrieve("Which genes are implicated in Marfan syndrome?")
"""

from __future__ import annotations

from typing import Any

from ark.errors import ArkError

__version__ = "0.1.0"

_EXPORTS = {
    "ARK": "ark.methods.ark.api",
    "build_method": "ark.methods",
    "method_specs": "ark.methods",
    "KnowledgeGraph": "ark.graph",
    "open_graph": "ark.loaders",
    "open_index": "ark.index",
    "OpenAIChatClient": "ark.llm",
    "resolve_settings": "ark.llm",
}

__all__ = [*_EXPORTS, "ArkError", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy: `import ark` stays cheap; the agent stack (openai SDK, pydantic models) loads on first use.
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'ark' has no attribute {name!r}")
