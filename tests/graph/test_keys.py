"""Per-graph lookup tables without a Python object per node: exact against dicts (hash collisions forced), and the
memory they take on a graph of 300,000 nodes against the dicts and lists they replace."""

from __future__ import annotations

import tracemalloc
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

import ark.graph.keys as keys
from ark.graph import EdgeTable, KnowledgeGraph, NodeTable, build_graph
from ark.graph.keys import KeyTable, column_chunks
from ark.quiz.schema_hops import nameable_mask

NAMES = ["Alpha", "alpha", " ALPHA  ", "Beta", "", "Gamma ray", "gamma  ray", "Delta", "beta", "Epsilon", "", "Zeta"]
TYPES = ["gene", "gene", "disease", "gene", "gene", "disease", "disease", "gene", "disease", "gene", "disease", "gene"]


def small_graph(chunks: int = 3) -> KnowledgeGraph:
    """Twelve nodes with shared, case-variant and empty names, the node table in ``chunks`` record batches."""
    ids = [f"N:{k}" for k in range(len(NAMES))]
    nodes = NodeTable(ids=ids, types=TYPES, names=NAMES, texts=[f"text {n}" for n in NAMES])
    edges = EdgeTable([ids[k] for k in range(0, 11)], [ids[k + 1] for k in range(0, 11)], ["next"] * 11)
    graph = build_graph(nodes, edges, metadata={"name": "keys"})
    bounds = np.linspace(0, graph.num_nodes, chunks + 1).astype(int)
    graph.nodes = pa.concat_tables([graph.nodes.slice(a, b - a) for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
    return graph


@pytest.fixture(params=[False, True], ids=["python-hash", "colliding-hash"])
def collisions(request, monkeypatch):
    """With ``True``, every key hashes to one of three values: each lookup must tell keys apart by comparing them."""
    if request.param:
        monkeypatch.setattr(keys, "key_hash", lambda key: hash(key) % 3)
    return request.param


def old_nameable(graph: KnowledgeGraph) -> np.ndarray:
    """The dict-based reading this replaced (the oracle)."""
    names = [" ".join(graph.name(i).lower().split()) for i in range(graph.num_nodes)]
    counts = Counter(zip(graph.node_type_codes.tolist(), names, strict=True))
    return np.asarray([bool(n) and counts[(t, n)] == 1 for t, n in zip(graph.node_type_codes.tolist(), names,
                                                                          strict=True)])


def test_key_table_rows_equal_a_dicts(collisions):
    values = ["b", None, "a", "b", "c", None, "a", "a", "d"]
    table = KeyTable.build(column_chunks(pa.array(values), rows=4))
    oracle: dict[str, list[int]] = {}
    for row, value in enumerate(values):
        if value is not None:
            oracle.setdefault(value, []).append(row)
    for key in ["a", "b", "c", "d", "e", None, 3]:
        assert table.rows(key, values.__getitem__) == oracle.get(key, []), key  # type: ignore[arg-type]
    assert len(table) == 7
    shared = table.shared_hash_rows().tolist()
    assert shared == sorted(shared) and {0, 2, 3, 6, 7} <= set(shared)  # the rows of a repeated key at least
    if not collisions:
        assert shared == [0, 2, 3, 6, 7]


def test_graph_ids_are_found_exactly_across_record_batches(collisions):
    graph = small_graph(chunks=3)
    assert graph.nodes.column("id").num_chunks == 3
    for k in range(graph.num_nodes):
        assert graph.index_of(f"N:{k}") == k and graph.has_node(f"N:{k}")
        assert graph.node_id(k) == f"N:{k}" and graph.name(k) == NAMES[k]
    for missing in ["N:12", "n:1", "", "N:1 "]:
        assert not graph.has_node(missing)
        with pytest.raises(KeyError, match="unknown node id"):
            graph.index_of(missing)


def test_nameable_mask_equals_the_counting_of_every_name(collisions):
    graph = small_graph()
    expected = old_nameable(graph)
    assert nameable_mask(graph).tolist() == expected.tolist()
    # "Alpha"/"alpha" are one gene name, " ALPHA  " a disease's; empty names are never nameable.
    assert expected.tolist() == [False, False, True, True, False, False, False, True, True, True, False, True]


def test_graphscout_name_tables_equal_dicts(collisions):
    from ark.methods.graphscout.tools.toolbox import NodeResolver

    graph = small_graph()
    resolver = NodeResolver(graph)
    counts = Counter(NAMES)
    for k, name in enumerate(NAMES):
        assert resolver.unique_name(name) == (k if name and counts[name] == 1 else None)
    assert resolver.nodes([], ["Zeta", "N:3", "Alpha", "nothing", "gamma  ray"]) == [11, 3, 0, 6]


def big_graph(n: int = 300_000) -> KnowledgeGraph:
    ids = [f"item.{k}" for k in range(n)]
    nodes = NodeTable(ids=ids, types=["item"] * n, names=[f"product number {k} deluxe" for k in range(n)],
                      texts=[""] * n)
    return build_graph(nodes, EdgeTable(ids[:2], ids[1:3], ["also_bought"] * 2), metadata={"name": "big"})


def traced_peak(action) -> float:
    """The most Python memory (MB) ``action`` held at once (numpy arrays included)."""
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_per_graph_tables_hold_no_python_object_per_node(monkeypatch):
    """300,000 nodes, read 4,096 rows at a time: the id lookup, the nameable mask and GraphScout's name tables each
    hold a few bytes a node (the dicts, lists and counters of every id or name they replace took 35-55 MB here)."""
    from ark.methods.graphscout.tools.toolbox import NodeResolver

    monkeypatch.setattr(keys, "BATCH_ROWS", 4096)
    graph = big_graph()
    assert traced_peak(lambda: graph.index_of("item.299999")) < 14
    assert traced_peak(lambda: nameable_mask(graph)) < 14
    assert traced_peak(lambda: NodeResolver(graph).unique_name("product number 7 deluxe")) < 14
    assert graph.index_of("item.299999") == 299_999 and graph.name(7) == "product number 7 deluxe"
