"""The prompt's example edges are found by a bounded scan: the same edge the whole-graph rule picks."""

from __future__ import annotations

import numpy as np
import pytest

from ark.methods.graphscout import prompt
from tests.support.graphs import build_clinical_graph, build_conditions_graph, build_drug_graph


def whole_graph_sample(graph, relation, source_type, target_type):
    """The rule stated on every edge at once: the lowest source with 2-20 such edges (else any), its first edge."""
    src, dst, rel = graph.edges()
    codes = np.asarray(graph.node_type_codes)
    keep = ((rel == graph.relation_types.index(relation)) & (codes[src] == graph.node_types.index(source_type))
            & (codes[dst] == graph.node_types.index(target_type)))
    sources, targets = src[keep], dst[keep]
    if len(sources) == 0:
        return None
    values, counts = np.unique(sources, return_counts=True)
    good = values[(counts >= 2) & (counts <= 20)]
    chosen = int(good[0]) if len(good) else int(values[0])
    return chosen, int(targets[np.flatnonzero(sources == chosen)[0]])


@pytest.mark.parametrize("build", [build_clinical_graph, build_drug_graph, build_conditions_graph])
@pytest.mark.parametrize("block", [1, 2, 3, 8192])
def test_edge_sample_matches_the_whole_graph_rule(build, block, monkeypatch):
    monkeypatch.setattr(prompt, "EDGE_SAMPLE_NODES", block)
    graph = build()
    found = 0
    for relation in graph.relation_types:
        for source_type in graph.node_types:
            for target_type in graph.node_types:
                expected = whole_graph_sample(graph, relation, source_type, target_type)
                assert prompt._edge_sample(graph, relation, source_type, target_type) == expected
                found += expected is not None
    assert found > 0


def test_edge_sample_does_not_materialise_every_edge(monkeypatch):
    graph = build_clinical_graph()

    def refuse():
        raise AssertionError("graph.edges() reads every edge of the graph")

    monkeypatch.setattr(graph, "edges", refuse)
    relation = graph.relation_types[0]
    assert any(prompt._edge_sample(graph, relation, s, t) for s in graph.node_types for t in graph.node_types)
