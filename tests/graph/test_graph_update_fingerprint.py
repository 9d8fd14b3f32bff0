"""An update's fingerprint is updated by its changes alone (ark.graph.versioning.fingerprint): after random sequences of
updates and compactions it equals the fingerprint hashed from scratch over the version's content; a changed node keeps
its index; a graph updated before fingerprint format 2 still opens, updates and verifies."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pytest

from ark.graph import KnowledgeGraph, load_graph, save_graph, verify_graph
from ark.graph.versioning import MANIFEST, compact_graph, fingerprint, recompute_fingerprint, update_graph
from ark.graph.versioning.delta import GraphDelta, empty_edges, empty_nodes
from tests.graph.update_model import ContentModel, random_delta
from tests.support.graphs import build_clinical_graph, build_conditions_graph, build_drug_graph


def _sequence(folder: Path, seed: int, steps: int = 6) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    save_graph((build_clinical_graph, build_conditions_graph, build_drug_graph)[seed % 3](), folder)
    pairs = []
    graph = load_graph(folder)
    for step in range(steps):
        graph = update_graph(folder, random_delta(ContentModel(graph), rng, step), current=graph)
        pairs.append(recompute_fingerprint(folder))
        if rng.random() < 0.3:
            compact_graph(folder)
            graph = load_graph(folder)
    return pairs


@pytest.mark.parametrize("seed", range(3))
def test_incremental_fingerprints_equal_the_content_hashed_from_scratch(tmp_path: Path, seed: int) -> None:
    pairs = _sequence(tmp_path / "g", seed)
    assert all(recorded == recomputed for recorded, recomputed in pairs), pairs
    assert len({recorded for recorded, _ in pairs}) == len(pairs)  # every version its own


def test_a_change_sum_that_forgets_the_edges_of_deleted_nodes_is_caught(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    real = fingerprint.change_sums

    def forgetful(current, delta):
        kept = GraphDelta(delta.nodes, delta.edges_added, delta.edges_removed, pa.array([], pa.string()))
        sums = real(current, kept)
        sums["nodes"] = real(current, delta)["nodes"]
        return sums

    monkeypatch.setattr("ark.graph.versioning.versions.change_sums", forgetful)
    save_graph(build_clinical_graph(), tmp_path / "g")
    graph = load_graph(tmp_path / "g")
    victim = next(i for i in range(graph.num_nodes) if graph.degree(i))
    update_graph(tmp_path / "g", GraphDelta(empty_nodes(), empty_edges(), empty_edges(),
                                            pa.array([graph.node_id(victim)], pa.string())))
    recorded, recomputed = recompute_fingerprint(tmp_path / "g")
    assert recorded != recomputed


def _row(node_id: str, text: str) -> GraphDelta:
    table = pa.Table.from_pylist([{"id": node_id, "type": "phenotype", "name": node_id, "text": text,
                                   "properties": "{}"}], schema=empty_nodes().schema)
    return GraphDelta(table, empty_edges(), empty_edges(), pa.array([], pa.string()))


def test_a_changed_node_keeps_its_index_and_order_is_in_the_fingerprint(tmp_path: Path) -> None:
    save_graph(build_clinical_graph(), tmp_path / "g")
    before = load_graph(tmp_path / "g")
    first = before.node_id(0)
    updated = update_graph(tmp_path / "g", _row(first, "changed text"))
    assert updated.index_of(first) == 0 and updated.text(0) == "changed text"
    assert updated.num_nodes == before.num_nodes
    # the same content reached with the node moved last (deleted, then given again): another numbering
    save_graph(build_clinical_graph(), tmp_path / "h")
    update_graph(tmp_path / "h", GraphDelta(empty_nodes(), empty_edges(), empty_edges(), pa.array([first])))
    again = update_graph(tmp_path / "h", _row(first, "changed text"))
    assert again.index_of(first) == again.num_nodes - 1
    assert again.metadata["fingerprint"] != updated.metadata["fingerprint"]


def test_a_graph_updated_before_fingerprint_format_2_opens_updates_and_verifies(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    save_graph(build_clinical_graph(), folder)
    graph = update_graph(folder, _row("new:1", "first"))
    manifest = json.loads((folder / MANIFEST).read_text())
    entry = manifest["history"][-1]
    del entry["sums"], entry["fingerprint_format"]
    entry["fingerprint"] = "0" * 32  # as the whole-graph hash of format 1 recorded it
    (folder / MANIFEST).write_text(json.dumps(manifest))
    opened = load_graph(folder)
    assert opened.has_node("new:1")
    # numbered anew (a changed node keeps its place now): not the fingerprint caches by node index were made for
    assert opened.metadata["fingerprint"] not in ("0" * 32, graph.metadata["fingerprint"])
    assert recompute_fingerprint(folder) == ("0" * 32, None)
    verify_graph(folder)
    after = update_graph(folder, _row("new:2", "second"), current=opened)
    assert after.has_node("new:1") and after.has_node("new:2") and after.num_nodes == graph.num_nodes + 1
    recorded, recomputed = recompute_fingerprint(folder)
    assert recorded == recomputed == after.metadata["fingerprint"]


def test_the_merge_shares_the_base_text_instead_of_copying_it(tmp_path: Path) -> None:
    from ark.graph.versioning.merge import merge_version

    base = build_clinical_graph()
    merged = merge_version(base, [_row(base.node_id(1), "changed text")], {})
    text = merged.nodes.column("text")
    base_data = base.nodes.column("text").chunk(0).buffers()[2]
    assert text.chunk(0).buffers()[2].address == base_data.address  # the rows before the change: the base's bytes
    assert merged.text(1) == "changed text" and merged.text(0) == base.text(0)
    assert merged.text(2) == base.text(2) and text.chunk(2).buffers()[2].address == base_data.address


@pytest.mark.parametrize("block", [1, 5, 1 << 22])
@pytest.mark.parametrize("build", [build_clinical_graph, build_drug_graph])
def test_content_sums_read_the_edges_a_block_of_rows_at_a_time(monkeypatch, build, block: int) -> None:
    """The edge sums equal those over every edge at once (``graph.edges()``, gigabytes on a large graph), which
    they never call."""
    import numpy as np

    import ark.graph.csr

    graph = build()
    ids, relations = fingerprint.id_hashes(graph.nodes.column("id").to_pylist()), fingerprint.id_hashes(
        graph.relation_types)
    src, dst, rel = graph.edges()
    expected = fingerprint.lane_sums(fingerprint.edge_hashes(ids[src], ids[dst], relations[np.asarray(rel, np.int64)]))
    monkeypatch.setattr(ark.graph.csr, "BLOCK_ENTRIES", block)
    monkeypatch.setattr(KnowledgeGraph, "edges", lambda self: pytest.fail("graph.edges() materialises every edge"))
    assert fingerprint.content_sums(graph)["edges"] == expected != [0, 0]
