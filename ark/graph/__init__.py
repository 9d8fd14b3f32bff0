"""Graph store: typed nodes with text, typed directed edges in CSR arrays over both directions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import GraphValidationError
from .files import load_graph, save_graph, verify_graph
from .info import GraphInfo
from .store import DIRECTIONS, KnowledgeGraph, Neighbors, SchemaTriple, normalize_name
from .tables import EdgeTable, NodeTable

if TYPE_CHECKING:
    from .build import build_graph, build_graph_from_arrays

__all__ = [
    "DIRECTIONS",
    "EdgeTable",
    "GraphInfo",
    "GraphValidationError",
    "KnowledgeGraph",
    "Neighbors",
    "NodeTable",
    "SchemaTriple",
    "build_graph",
    "build_graph_from_arrays",
    "load_graph",
    "normalize_name",
    "save_graph",
    "verify_graph",
]


def __getattr__(name: str) -> object:
    """Import the builders on first use: they need ``pyarrow.compute`` (~0.1 s), which opening a saved graph does
    not."""
    if name in ("build_graph", "build_graph_from_arrays"):
        from . import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
