"""Opening a version replays its updates from the base in one merge: the node types must be numbered as applying
them one by one numbered them (the fingerprint covers the numbering), even when an update re-upserts a node of an
earlier new type after one of its own new type."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from ark.graph import KnowledgeGraph
from ark.graph.delta import GraphDelta, empty_edges, empty_nodes
from ark.graph.versions import open_version, update_graph
from tests.support.graphs import build_clinical_graph


def _rows(*rows: tuple[str, str]) -> GraphDelta:
    table = pa.Table.from_pylist([{"id": i, "type": t, "name": i, "text": i, "properties": "{}"} for i, t in rows],
                                 schema=empty_nodes().schema)
    return GraphDelta(table, empty_edges(), empty_edges(), pa.array([], pa.string()))


def test_a_replayed_version_numbers_new_types_as_the_updates_did(tmp_path: Path) -> None:
    build_clinical_graph().save(tmp_path / "g")
    update_graph(tmp_path / "g", _rows(("n1", "alpha")))
    made = update_graph(tmp_path / "g", _rows(("n2", "beta"), ("n1", "alpha")))
    opened = open_version(tmp_path / "g")
    assert opened.node_types == made.node_types
    assert opened.metadata["fingerprint"] == made.metadata["fingerprint"]
    assert KnowledgeGraph.load(tmp_path / "g").metadata["fingerprint"] == made.metadata["fingerprint"]
