"""The node types and relations a graph version still has, as a SeedER model's version check reads them: from the
schema's edge counts, never by materialising every edge (``graph.edges()``: gigabytes on GRBench Amazon)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ark.graph import KnowledgeGraph, load_graph, save_graph
from ark.graph.versioning import open_version, update_graph
from ark.graph.versioning.delta import GraphDelta, empty_edges, empty_nodes
from ark.methods.seeder.store import _live_types
from tests.support.seeder_fixture import build_connector_graph


def _edge_reading(graph: KnowledgeGraph) -> tuple[set[str], set[str]]:
    """What the check read before: a bincount over every edge's relation."""
    counts = np.bincount(np.asarray(graph.node_type_codes, np.int64), minlength=len(graph.node_types))
    relations = np.bincount(np.asarray(graph.edges()[2], np.int64), minlength=len(graph.relation_types))
    return ({t for t, c in zip(graph.node_types, counts, strict=True) if c},
            {r for r, c in zip(graph.relation_types, relations, strict=True) if c})


def _no_edges(self: KnowledgeGraph) -> None:
    raise AssertionError("graph.edges() materialises every edge")


@pytest.mark.parametrize("prefix", [None, "code:", "topic:"])
def test_live_types_match_every_edge_read_without_reading_them(tmp_path: Path, monkeypatch, prefix) -> None:
    graph, _ = build_connector_graph()
    save_graph(graph, tmp_path / "g")
    if prefix is not None:  # a version whose deleted nodes take some relations' last edges with them
        ids = load_graph(tmp_path / "g").nodes.column("id").to_pylist()
        deleted = pa.array([x for x in ids if x.startswith(prefix)], pa.string())
        update_graph(tmp_path / "g", GraphDelta(empty_nodes(), empty_edges(), empty_edges(), deleted))
    version = open_version(tmp_path / "g")
    expected = _edge_reading(version)
    assert prefix is None or expected[1] < set(version.relation_types)  # some relation lost all its edges
    monkeypatch.setattr(KnowledgeGraph, "edges", _no_edges)
    assert _live_types(version) == expected
