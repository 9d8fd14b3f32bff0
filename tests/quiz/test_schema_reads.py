"""The quizzers' whole-graph reads (each hop's start nodes, a relation's targets) give what reading every edge at
once gave, a block of CSR rows at a time, never through ``graph.edges()`` (every edge: gigabytes on GRBench
Amazon)."""

from __future__ import annotations

import numpy as np
import pytest

import ark.graph.csr
from ark.graph import KnowledgeGraph, NodeTable, build_graph_from_arrays
from ark.quiz.schema_hops import nameable_mask, schema_hops
from ark.quiz.shapes import _targets


def _hop_starts_from_every_edge(graph: KnowledgeGraph, nameable: np.ndarray) -> list[tuple]:
    """Each hop's (from type, step, starts) as ``schema_hops`` found them from ``graph.edges()`` before."""
    src, dst, rel = graph.edges()
    types, out = graph.node_type_codes, []
    for triple in graph.schema:
        if triple.count == 0:
            continue
        s_code, t_code = graph.node_types.index(triple.source_type), graph.node_types.index(triple.target_type)
        mask = (rel == graph.relation_types.index(triple.relation)) & (types[src] == s_code) & (types[dst] == t_code)
        for from_type, direction, ends in ((triple.source_type, "out", src[mask]),
                                           (triple.target_type, "in", dst[mask])):
            starts = np.unique(ends).astype(np.int32)
            out.append((from_type, triple.relation, direction, starts[nameable[starts]]))
    return out


def _targets_from_every_edge(graph: KnowledgeGraph, relation: str) -> set[int]:
    _, targets, codes = graph.edges()
    return set(np.unique(targets[codes == graph.relation_code(relation)]).tolist())


def _no_edges(self: KnowledgeGraph) -> None:
    raise AssertionError("graph.edges() materialises every edge")


def _random_graph(seed: int) -> KnowledgeGraph:
    """Three node types, four relations (one without edges), self-loops, hubs and nodes without edges."""
    rng = np.random.default_rng(seed)
    n = 60
    types = ["gene", "disease", "drug"]
    type_codes = rng.integers(0, 3, size=n)
    nodes = NodeTable([f"n{i}" for i in range(n)], [types[c] for c in type_codes],
                      [f"name {i}" if i % 7 else "" for i in range(n)]).to_arrow()
    m = 150
    src = np.concatenate([rng.integers(0, n, size=m), np.zeros(20, np.int64), [5, 6]])
    dst = np.concatenate([rng.integers(0, n, size=m), rng.integers(0, n, size=20), [5, 6]])
    rel = np.concatenate([rng.integers(0, 3, size=m + 20), [1, 2]])
    keep = (src < 50) & (dst < 50)  # nodes 50..59 have no edges
    return build_graph_from_arrays(nodes, type_codes, types, src[keep], dst[keep], rel[keep],
                                   ["treats", "causes", "links", "unused"], metadata={"name": "random"})


def _check_same_reads(graph: KnowledgeGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    nameable = nameable_mask(graph)
    expected_hops = _hop_starts_from_every_edge(graph, nameable)
    expected_targets = {r: _targets_from_every_edge(graph, r) for r in graph.relation_types}
    monkeypatch.setattr(KnowledgeGraph, "edges", _no_edges)
    hops, _ = schema_hops(graph, nameable)
    assert len(hops) == len(expected_hops)
    for hop, (from_type, relation, direction, starts) in zip(hops, expected_hops, strict=True):
        assert (hop.from_type, hop.step.relation, hop.step.direction) == (from_type, relation, direction)
        assert hop.starts.dtype == starts.dtype and hop.starts.tolist() == starts.tolist()
    assert {r: _targets(graph, r) for r in graph.relation_types} == expected_targets


@pytest.mark.parametrize("block", [1, 7, 1 << 22])
@pytest.mark.parametrize("seed", range(3))
def test_reads_match_every_edge_on_a_random_graph(monkeypatch, seed: int, block: int) -> None:
    monkeypatch.setattr(ark.graph.csr, "BLOCK_ENTRIES", block)  # one row at a time, a few rows, the whole graph
    _check_same_reads(_random_graph(seed), monkeypatch)


def test_reads_match_every_edge_on_hpo(use_hpo_home, monkeypatch) -> None:
    from ark.loaders import open_graph

    graph = open_graph("hpo")
    monkeypatch.setattr(ark.graph.csr, "BLOCK_ENTRIES", 50_000)  # several blocks
    _check_same_reads(graph, monkeypatch)
