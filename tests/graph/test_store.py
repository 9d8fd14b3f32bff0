"""KnowledgeGraph: exact save/load round trip, lookups against brute force, names, atomic saves."""

from __future__ import annotations

import json
import mmap
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ark.graph import (
    EdgeTable,
    GraphValidationError,
    KnowledgeGraph,
    NodeTable,
    build_graph,
    load_graph,
    save_graph,
    storage,
)

NODE_TYPES = ["Gene", "Disease Type", "phenotype"]
RELATIONS = ["has_phenotype", "associated with", "is-a", "treats"]


Edge = tuple[str, str, str]


def random_graph(seed: int = 7, n: int = 60, m: int = 400) -> tuple[KnowledgeGraph, list[Edge]]:
    """A random typed multigraph with duplicate edges and self loops, plus its raw edge list."""
    rng = random.Random(seed)
    ids = [f"X:{k:03d}" for k in rng.sample(range(1000), n)]
    types = [rng.choice(NODE_TYPES) for _ in ids]
    properties = [{"rank": k, "label": f"node {k}"} if k % 3 else None for k in range(n)]
    nodes = NodeTable(
        ids=ids,
        types=types,
        names=[f"name {i}" for i in ids],
        texts=[f"text of {i} with émoji ✓" for i in ids],
        properties=properties,
    )
    edges = [(rng.choice(ids), rng.choice(ids), rng.choice(RELATIONS)) for _ in range(m)]
    edges += edges[:20] + [(ids[0], ids[0], RELATIONS[0])]
    table = EdgeTable([e[0] for e in edges], [e[1] for e in edges], [e[2] for e in edges])
    graph = build_graph(nodes, table, metadata={"name": "random", "source": "test", "version": "1"})
    return graph, edges


def reference_neighbors(graph: KnowledgeGraph, edges, i: int) -> list[tuple[int, str, bool]]:
    """All (neighbor, relation, outgoing) of node ``i`` from the raw edge list, deduplicated and sorted."""
    me = graph.node_id(i)
    found = set()
    for src, dst, rel in set(edges):
        if src == me:
            found.add((graph.index_of(dst), rel, True))
        if dst == me:
            found.add((graph.index_of(src), rel, False))
    return sorted(found, key=lambda e: (graph.relation_types.index(e[1]), not e[2], e[0]))


def as_tuples(graph: KnowledgeGraph, found) -> list[tuple[int, str, bool]]:
    return [
        (int(n), graph.relation_types[int(r)], bool(o))
        for n, r, o in zip(found.nodes, found.relations, found.outgoing, strict=True)
    ]


@pytest.fixture(scope="module")
def graph_and_edges():
    return random_graph()


def test_neighbor_lookups_match_brute_force(graph_and_edges) -> None:
    graph, edges = graph_and_edges
    assert graph.num_edges == len(set(edges))
    for i in range(graph.num_nodes):
        expected = reference_neighbors(graph, edges, i)
        assert as_tuples(graph, graph.neighbors(i)) == expected
        assert graph.degree(i) == len(expected)
        for direction, keep in (("out", {True}), ("in", {False}), ("both", {True, False})):
            want = [e for e in expected if e[2] in keep]
            assert as_tuples(graph, graph.neighbors(i, direction=direction)) == want
            for code, relation in enumerate(graph.relation_types):
                typed = [e for e in want if e[1] == relation]
                assert as_tuples(graph, graph.neighbors(i, relation, direction)) == typed
                assert as_tuples(graph, graph.neighbors(i, code, direction)) == typed


def test_edges_schema_and_types_match_input(graph_and_edges) -> None:
    graph, edges = graph_and_edges
    src, dst, rel = graph.edges()
    stored = {
        (graph.node_id(s), graph.node_id(d), graph.relation_types[r])
        for s, d, r in zip(src, dst, rel, strict=True)
    }
    assert stored == set(edges) and len(src) == len(set(edges))
    counts: dict[tuple[str, str, str], int] = {}
    for s, d, r in set(edges):
        key = (graph.node_type(graph.index_of(s)), r, graph.node_type(graph.index_of(d)))
        counts[key] = counts.get(key, 0) + 1
    assert {(t.source_type, t.relation, t.target_type): t.count for t in graph.schema} == counts
    for node_type in NODE_TYPES:
        members = graph.nodes_of_type(node_type)
        assert all(graph.node_type(int(i)) == node_type for i in members)
        assert len(members) == graph.type_counts()[node_type]


def is_memory_mapped(array: np.ndarray) -> bool:
    """Whether the array's memory comes from a memory map (directly or through views)."""
    while array is not None:
        if isinstance(array, np.memmap | mmap.mmap):
            return True
        array = getattr(array, "base", None)
    return False


def assert_same_graph(a: KnowledgeGraph, b: KnowledgeGraph) -> None:
    assert (a.num_nodes, a.num_edges) == (b.num_nodes, b.num_edges)
    assert a.node_types == b.node_types and a.relation_types == b.relation_types
    assert a.schema == b.schema and a.metadata == b.metadata
    for i in range(a.num_nodes):
        assert (a.node_id(i), a.name(i), a.text(i), a.node_type(i)) == (b.node_id(i), b.name(i), b.text(i),
                                                                         b.node_type(i))
        assert a.properties(i) == b.properties(i)
        assert as_tuples(a, a.neighbors(i)) == as_tuples(b, b.neighbors(i))


@pytest.mark.parametrize("mmap", [True, False])
def test_save_load_round_trip_is_exact(graph_and_edges, tmp_path: Path, mmap: bool) -> None:
    graph, _ = graph_and_edges
    save_graph(graph, tmp_path / "g")
    loaded = load_graph(tmp_path / "g", mmap=mmap)
    assert_same_graph(graph, loaded)
    assert loaded.metadata["fingerprint"] == graph.metadata["fingerprint"]
    assert loaded.properties(1) == {"rank": 1, "label": "node 1"} and loaded.properties(0) == {}
    assert loaded.index_of(graph.node_id(5)) == 5
    assert is_memory_mapped(loaded.neighbor_array) == mmap


def test_names_resolve_case_and_separator_insensitively(graph_and_edges) -> None:
    graph, _ = graph_and_edges
    assert graph.resolve_node_type("disease_type") == "Disease Type"
    assert graph.resolve_node_type("DISEASE-TYPE") == "Disease Type"
    assert graph.resolve_relation("Associated_With") == "associated with"
    assert graph.resolve_relation("IS A") == "is-a"
    with pytest.raises(ValueError, match="unknown node type 'drug'; valid: ") as error:
        graph.resolve_node_type("drug")
    assert all(name in str(error.value) for name in NODE_TYPES)
    with pytest.raises(ValueError, match="unknown relation 'cures'; valid: ") as error:
        graph.neighbors(0, relation="cures")
    assert all(name in str(error.value) for name in RELATIONS)
    with pytest.raises(ValueError, match="unknown direction 'up'; valid: both, out, in"):
        graph.neighbors(0, direction="up")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="unknown node id 'nope'"):
        graph.index_of("nope")


def test_failed_save_leaves_previous_graph_intact(graph_and_edges, tmp_path: Path, monkeypatch) -> None:
    graph, _ = graph_and_edges
    target = tmp_path / "g"
    save_graph(graph, target)
    other, _ = random_graph(seed=99, n=10, m=20)
    other.metadata["unserializable"] = object()
    with pytest.raises(TypeError):
        save_graph(other, target)
    calls = {"n": 0}
    real_save = np.save

    def failing_save(path, array):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        real_save(path, array)

    del other.metadata["unserializable"]
    monkeypatch.setattr(storage.np, "save", failing_save)
    with pytest.raises(OSError, match="disk full"):
        save_graph(other, target)
    assert calls["n"] == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]
    assert_same_graph(graph, load_graph(target))


def test_save_replaces_existing_graph(graph_and_edges, tmp_path: Path) -> None:
    graph, _ = graph_and_edges
    other, _ = random_graph(seed=3, n=12, m=30)
    save_graph(graph, tmp_path / "g")
    save_graph(other, tmp_path / "g")
    assert_same_graph(other, load_graph(tmp_path / "g"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]


def test_save_refuses_a_non_graph_folder_and_leaves_it_intact(graph_and_edges, tmp_path: Path) -> None:
    graph, _ = graph_and_edges
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    (precious / "graph.json").write_text('{"id": "demo"}')  # an ark-agent-cli folder: no format_version
    with pytest.raises(GraphValidationError, match="precious.*new or empty"):
        save_graph(graph, precious)
    assert sorted(p.name for p in precious.iterdir()) == ["graph.json", "notes.txt"]
    assert (precious / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious"]


def test_save_refuses_a_file_but_fills_an_empty_folder(graph_and_edges, tmp_path: Path) -> None:
    graph, _ = graph_and_edges
    (tmp_path / "file").write_text("x")
    with pytest.raises(GraphValidationError, match="not a directory"):
        save_graph(graph, tmp_path / "file")
    assert (tmp_path / "file").read_text() == "x"
    (tmp_path / "empty").mkdir()
    save_graph(graph, tmp_path / "empty")
    assert_same_graph(graph, load_graph(tmp_path / "empty"))


def test_node_table_is_memory_mapped_and_text_reads_without_a_copy(graph_and_edges, tmp_path: Path) -> None:
    graph, _ = graph_and_edges
    save_graph(graph, tmp_path / "g")
    assert (tmp_path / "g" / "nodes.arrow").is_file() and not (tmp_path / "g" / "nodes.parquet").exists()
    before = pa.total_allocated_bytes()
    loaded = load_graph(tmp_path / "g")
    assert loaded.nodes.nbytes > 0 and pa.total_allocated_bytes() == before  # the text lives in the memory map
    assert [loaded.text(i) for i in range(loaded.num_nodes)] == [graph.text(i) for i in range(graph.num_nodes)]
    assert pa.total_allocated_bytes() == before


def test_graphs_saved_in_format_1_still_load(graph_and_edges, tmp_path: Path) -> None:
    """Format 1 kept the node table as nodes.parquet: such a cached graph opens unchanged."""
    graph, _ = graph_and_edges
    folder = save_graph(graph, tmp_path / "g")
    pq.write_table(load_graph(folder, mmap=False).nodes, folder / "nodes.parquet")
    (folder / "nodes.arrow").unlink()
    meta = json.loads((folder / "graph.json").read_text())
    del meta["files"]  # format 1 predates checksums
    (folder / "graph.json").write_text(json.dumps({**meta, "format_version": 1}))
    assert_same_graph(graph, load_graph(folder))
    (folder / "graph.json").write_text(json.dumps({**meta, "format_version": 9}))
    with pytest.raises(GraphValidationError, match="format version 9 is not supported"):
        load_graph(folder)


def test_rows_read_the_same_names_types_and_texts_as_one_node_at_a_time(graph_and_edges, tmp_path: Path) -> None:
    """``rows`` (a search call's hits, read from the columns' buffers) equals ``name``/``node_type``/``text`` per
    node: in memory, memory-mapped, on a sliced table (buffer offsets), with empty and missing texts, chunked."""
    graph, _ = graph_and_edges
    save_graph(graph, tmp_path / "g")
    nodes = [5, 0, 59, 5, 17]

    def one_by_one(g: KnowledgeGraph, at: list[int]) -> tuple[list, list, list]:
        return [g.name(i) for i in at], [g.node_type(i) for i in at], [g.text(i) for i in at]

    texts = pa.array(["", None, "a\nb ✓"] * 20, pa.string())
    variants = [graph, load_graph(tmp_path / "g")]
    for table in (graph.nodes.slice(3), graph.nodes.set_column(graph.nodes.column_names.index("text"), "text", texts),
                  pa.concat_tables([graph.nodes.slice(0, 30), graph.nodes.slice(30)])):
        variants.append(KnowledgeGraph(table, graph.node_type_codes[len(graph.node_type_codes) - len(table):],
                                       graph.node_types, graph.relation_types, graph.indptr, graph.neighbor_array,
                                       graph.code_array, graph.schema))
    for g in variants:
        at = [n for n in nodes if n < g.num_nodes]
        assert g.rows(at) == one_by_one(g, at)
    assert variants[2].rows([0])[0] == [graph.name(3)]
    assert variants[3].rows([0, 1, 2])[2] == ["", None, "a\nb ✓"]
    assert graph.rows([]) == ([], [], [])
