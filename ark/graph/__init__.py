"""Graph store: typed nodes with text, typed directed edges in CSR arrays over both directions."""

from .build import build_graph, build_graph_from_arrays
from .errors import GraphValidationError
from .store import DIRECTIONS, KnowledgeGraph, Neighbors, SchemaTriple, normalize_name
from .tables import EdgeTable, NodeTable

__all__ = [
    "DIRECTIONS",
    "EdgeTable",
    "GraphValidationError",
    "KnowledgeGraph",
    "Neighbors",
    "NodeTable",
    "SchemaTriple",
    "build_graph",
    "build_graph_from_arrays",
    "normalize_name",
]
