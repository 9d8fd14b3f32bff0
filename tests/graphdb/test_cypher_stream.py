"""The Cypher export in bounded memory: nodes and edges read from the graph's arrays a chunk at a time and loaded by
several ``COPY`` statements per table give the same database as one ``COPY`` per table, and the graph's own
content (nodes, properties, ``idx``, every edge of every relation and FROM/TO pair)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from ark.graph import KnowledgeGraph, load_graph, save_graph
from ark.graphdb.export import node_properties_by_type, write_database
from ark.graphdb.ladybug_engine import LadybugEngine
from ark.graphdb.schema import build_schema
from ark.graphdb.stream import ExportChunks, edge_chunks, edge_parts, node_index_chunks, scan_property_columns
from tests.support.graphs import build_clinical_graph, build_conditions_graph, build_drug_graph

FIXTURES = (build_clinical_graph, build_conditions_graph, build_drug_graph)
TINY = ExportChunks(node_bytes=1, edge_rows=2, buffer_pool_mb=64, scan_rows=3)  # one node a COPY, 2 edges a part
WHOLE = ExportChunks(node_bytes=2**40, edge_rows=2**40, buffer_pool_mb=256, scan_rows=2**30)  # one COPY a table


def saved(tmp_path: Path, build) -> KnowledgeGraph:
    save_graph(build(), tmp_path / "graph")
    return load_graph(tmp_path / "graph")  # memory-mapped arrays, as the export reads them


@pytest.mark.parametrize("build", FIXTURES)
@pytest.mark.parametrize("window", [1, 2, 5, 1 << 20])
def test_chunks_of_the_arrays_are_the_whole_arrays_in_order(tmp_path: Path, build, window: int) -> None:
    graph = saved(tmp_path, build)
    parts = list(edge_chunks(graph, window))
    for whole, k in zip(graph.edges(), range(3), strict=True):
        assert np.array_equal(np.concatenate([p[k] for p in parts]), whole)
    for node_type in graph.node_types:
        chunks = list(node_index_chunks(graph, node_type, 2, window))
        assert all(len(c) == 2 for c in chunks[:-1])
        assert np.array_equal(np.concatenate(chunks), graph.nodes_of_type(node_type))
    expected = build_schema(graph, node_properties_by_type(graph))
    assert build_schema(graph, property_columns=scan_property_columns(graph, window)) == expected


@pytest.mark.parametrize("build", FIXTURES)
def test_edge_parts_hold_every_edge_of_each_pair_at_most_rows_a_file(tmp_path: Path, build) -> None:
    graph = saved(tmp_path, build)
    schema = build_schema(graph)
    staging = tmp_path / "parts"
    staging.mkdir()
    found: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for key, file in edge_parts(graph, schema, staging, rows=2, entries=3):
        table = pq.read_table(file)
        assert 1 <= table.num_rows <= 2
        found.setdefault(key, []).extend(zip(table.column("from").to_pylist(), table.column("to").to_pylist(),
                                             strict=True))
    src, dst, rel = graph.edges()
    codes = graph.node_type_codes
    expected: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for a, b, r in zip(src.tolist(), dst.tolist(), rel.tolist(), strict=True):
        key = (schema.rel_label(graph.relation_types[r]), schema.node_label(graph.node_types[codes[a]]),
               schema.node_label(graph.node_types[codes[b]]))
        expected.setdefault(key, []).append((graph.node_id(a), graph.node_id(b)))
    assert found == expected  # same pairs, each in the graph's edge order
    assert any(len(v) > 2 for v in found.values())  # some table spans several parts


def test_chunk_sizes_are_checked() -> None:
    with pytest.raises(ValueError, match="edge_rows must be at least 1"):
        ExportChunks(edge_rows=0)


needs_ladybug = pytest.mark.skipif(importlib.util.find_spec("ladybug") is None, reason="graphdb extra missing")
QUERIES = (
    "MATCH (n) RETURN label(n), n.id, n.idx, n.name, n.text",
    "MATCH (n) RETURN n",  # every column, properties included
    "MATCH (a)-[r]->(b) RETURN label(r), label(a), a.id, label(b), b.id",
    "MATCH (a)-[r]->(b) RETURN label(r), label(a), label(b), count(*)",
    "MATCH (a)<-[r]-(b) RETURN a.id, label(r), count(*)",  # the backward lists, filled by several COPYs
    "MATCH (a)-[]->()-[]->(c) RETURN a.id, c.id, count(*)",
)


def answers(path: Path) -> list[list[str]]:
    with LadybugEngine(path) as engine:
        return [sorted(json.dumps(row, sort_keys=True, default=str) for row in engine.query(q, limit=100_000).rows)
                for q in QUERIES]


@needs_ladybug
@pytest.mark.parametrize("build", FIXTURES)
def test_a_chunked_export_equals_one_copy_per_table_and_the_graph(tmp_path: Path, build) -> None:
    graph = saved(tmp_path, build)
    (tmp_path / "tiny").mkdir()
    (tmp_path / "whole").mkdir()
    assert TINY.node_rows(graph) == 1
    schema = write_database(graph, tmp_path / "tiny" / "graph.lbug", chunks=TINY)
    assert schema == write_database(graph, tmp_path / "whole" / "graph.lbug", chunks=WHOLE)
    assert schema == build_schema(graph, node_properties_by_type(graph))
    tiny, whole = answers(tmp_path / "tiny" / "graph.lbug"), answers(tmp_path / "whole" / "graph.lbug")
    assert tiny == whole
    rows = [json.loads(row) for row in tiny[0]]
    assert sorted((r[1], r[2], r[3], r[4]) for r in rows) == sorted(
        (graph.node_id(i), i, graph.name(i), graph.text(i)) for i in range(graph.num_nodes))
    src, dst, rel = graph.edges()
    assert sorted((r[0], r[2], r[4]) for r in map(json.loads, tiny[2])) == sorted(
        (schema.rel_label(graph.relation_types[r]), graph.node_id(a), graph.node_id(b))
        for a, b, r in zip(src.tolist(), dst.tolist(), rel.tolist(), strict=True))
    assert len({r[0] for r in map(json.loads, tiny[2])}) > 1  # several relation types
    assert not list((tmp_path / "tiny").glob(".parquet-*"))  # the staging files are gone


@needs_ladybug
def test_properties_arrive_in_their_typed_columns_chunk_by_chunk(tmp_path: Path) -> None:
    graph = saved(tmp_path, build_drug_graph)
    write_database(graph, tmp_path / "graph.lbug", chunks=TINY)
    schema = build_schema(graph, node_properties_by_type(graph))
    with LadybugEngine(tmp_path / "graph.lbug") as engine:
        for spec in schema.nodes:
            for column in spec.properties:
                rows = engine.query(f"MATCH (n:`{spec.label}`) RETURN n.idx, n.`{column.name}`").rows
                for idx, value in rows:
                    raw = graph.properties(idx).get(column.key)
                    assert (value is None) == (raw is None), (spec.label, column.name, idx)


def mapped_kb(folder: Path) -> int:
    """Resident kB of this process's mappings of files under ``folder``."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if "-" in line.split(" ")[0] and len(line.split()) >= 5 and ":" not in line.split()[0]:
            inside = line.split()[-1].startswith(str(folder.resolve()) + "/")
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux only")
def test_released_pages_leave_the_resident_set_and_read_back_unchanged(tmp_path: Path) -> None:
    from ark.graphdb.stream import release_pages

    graph = saved(tmp_path, build_drug_graph)
    before = [np.array(a) for a in (graph.indptr, graph.neighbor_array, graph.code_array)], graph.nodes.to_pylist()
    assert mapped_kb(tmp_path / "graph") > 0
    release_pages(graph)
    assert mapped_kb(tmp_path / "graph") == 0
    after = [np.array(a) for a in (graph.indptr, graph.neighbor_array, graph.code_array)], graph.nodes.to_pylist()
    assert all(np.array_equal(a, b) for a, b in zip(before[0], after[0], strict=True)) and before[1] == after[1]


def test_rows_taken_chunk_by_chunk_equal_a_whole_take() -> None:
    import pyarrow as pa

    from ark.graphdb.stream import take_rows

    column = pa.chunked_array([pa.array(["a", "b", "c"]), pa.array([], pa.string()), pa.array(["d", "e"]),
                               pa.array(["f"])])
    rng = np.random.default_rng(1)
    for size in range(12):
        for indices in (rng.integers(0, 6, size), np.sort(rng.integers(0, 6, size))):
            assert take_rows(column, indices).to_pylist() == [column[int(i)].as_py() for i in indices]
