"""Turning outside formats into a :class:`ark.graph.KnowledgeGraph`, and the built-in named graphs."""

from __future__ import annotations

import importlib
from typing import Any

# Lazy: a command that opens one built graph imports only the registry, not every loader (start-up time).
_EXPORTS = {
    "relational_document": "documents",
    "AnswerMatcher": "grbench",
    "GRBenchQuestion": "grbench",
    "import_grbench": "grbench",
    "load_grbench": "grbench",
    "load_grbench_questions": "grbench",
    "build_hpo_graph": "hpo",
    "hpo_data_dir": "hpo",
    "Query": "queries",
    "read_query_jsonl": "queries",
    "BUILDERS": "registry",
    "build_named_graph": "registry",
    "graph_dir": "registry",
    "open_graph": "registry",
    "STARK_DATASETS": "stark",
    "download_stark_skb": "stark",
    "import_stark": "stark",
    "load_stark_skb": "stark",
    "stark_document": "stark",
    "available_splits": "stark_qa",
    "load_stark_qa": "stark_qa",
    "import_tabular": "tabular",
    "load_tabular": "tabular",
}

__all__ = [
    "BUILDERS",
    "AnswerMatcher",
    "GRBenchQuestion",
    "STARK_DATASETS",
    "Query",
    "available_splits",
    "build_hpo_graph",
    "build_named_graph",
    "download_stark_skb",
    "graph_dir",
    "hpo_data_dir",
    "import_grbench",
    "import_stark",
    "import_tabular",
    "load_grbench",
    "load_grbench_questions",
    "load_stark_qa",
    "load_stark_skb",
    "load_tabular",
    "open_graph",
    "read_query_jsonl",
    "relational_document",
    "stark_document",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
