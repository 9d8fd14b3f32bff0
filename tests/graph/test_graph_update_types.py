"""Opening a version replays its updates from the base in one merge: the node types must be numbered as applying
them one by one numbered them (the fingerprint covers the numbering), even when an update re-upserts a node of an
earlier new type after one of its own new type."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from ark.graph import load_graph, save_graph
from ark.graph.versioning import open_version, update_graph
from ark.graph.versioning.delta import GraphDelta, empty_edges, empty_nodes
from tests.support.graphs import build_clinical_graph


def _rows(*rows: tuple[str, str]) -> GraphDelta:
    table = pa.Table.from_pylist([{"id": i, "type": t, "name": i, "text": i, "properties": "{}"} for i, t in rows],
                                 schema=empty_nodes().schema)
    return GraphDelta(table, empty_edges(), empty_edges(), pa.array([], pa.string()))


def test_a_replayed_version_numbers_new_types_as_the_updates_did(tmp_path: Path) -> None:
    save_graph(build_clinical_graph(), tmp_path / "g")
    update_graph(tmp_path / "g", _rows(("n1", "alpha")))
    made = update_graph(tmp_path / "g", _rows(("n2", "beta"), ("n1", "alpha")))
    opened = open_version(tmp_path / "g")
    assert opened.node_types == made.node_types
    assert opened.metadata["fingerprint"] == made.metadata["fingerprint"]
    assert load_graph(tmp_path / "g").metadata["fingerprint"] == made.metadata["fingerprint"]


def test_equal_node_columns_give_equal_fingerprints_whatever_their_layout() -> None:
    """A merged version's columns are filtered and concatenated (offsets not from 0, spare bytes, validity bitmaps):
    the fingerprint must still equal that of the same content read from disk."""
    import numpy as np
    import pyarrow.compute as pc

    from ark.graph.build import _fingerprint

    rows = {"id": ["a", "b", "c", "d"], "name": ["A", "B", "C", "D"], "text": ["x", "yy", "zzz", "w"]}
    fresh = pa.table({k: v[1:] for k, v in rows.items()})
    wide = pa.table({k: pa.array([None, *v[1:]], pa.string()) for k, v in rows.items()})
    filtered = wide.filter(pc.is_valid(wide.column("id"))).combine_chunks()
    sliced = pa.table(rows).slice(1).combine_chunks()
    arrays = (np.arange(3, dtype=np.int32), np.zeros(3, dtype=np.int16))
    expected = _fingerprint(fresh, *arrays)
    assert _fingerprint(filtered, *arrays) == expected
    assert _fingerprint(sliced, *arrays) == expected
