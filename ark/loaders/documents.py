"""Node documents that include the node's neighborhood, for relation-aware text baselines (``bm25-rel``)."""

from __future__ import annotations

import numpy as np

from ark.graph import KnowledgeGraph


def relational_document(graph: KnowledgeGraph, i: int, max_neighbors_per_relation: int | None = 50) -> str:
    """The node's text followed by a ``- relations:`` block in the style of STaRK's ``get_rel_info``.

    One line per relation (in the graph's relation order, relations without neighbors skipped), listing the
    neighbor names grouped by node type: ``  has_phenotype: {phenotype: (Seizure, Ataxia),}``. Neighbors are
    taken in both edge directions, each once, in index order; at most ``max_neighbors_per_relation`` per
    relation (``None``: all). Spaces in relation names become underscores, as STaRK writes them.
    """
    text = graph.text(i)
    found = graph.neighbors(i)
    if len(found) == 0:
        return text
    lines = []
    for code in np.unique(found.relations):
        nodes = np.unique(found.nodes[found.relations == code])
        if max_neighbors_per_relation is not None:
            nodes = nodes[:max_neighbors_per_relation]
        types = np.asarray(graph.node_type_codes)[nodes]
        groups = "".join(
            f"{graph.node_types[int(t)]}: ({', '.join(graph.name(int(n)) for n in nodes[types == t])}),"
            for t in np.unique(types)
        )
        relation = graph.relation_types[int(code)].replace(" ", "_")
        lines.append(f"  {relation}: {{{groups}}}")
    separator = "" if text.endswith("\n") or not text else "\n"
    return text + separator + "- relations:\n" + "\n".join(lines)
