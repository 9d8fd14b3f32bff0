"""Turning outside formats into a :class:`ark.graph.KnowledgeGraph`, and the built-in named graphs."""

from .hpo import build_hpo_graph, hpo_data_dir
from .registry import BUILDERS, build_named_graph, graph_dir, open_graph

__all__ = ["BUILDERS", "build_hpo_graph", "build_named_graph", "graph_dir", "hpo_data_dir", "open_graph"]
