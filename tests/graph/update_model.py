"""A reference model of a graph's content for the update property test, and the comparison with a rebuild.

The model applies updates the obvious way (an ordered dict of node rows, where a changed node keeps its place and a
new one goes last, and a set of edges), independently of :mod:`ark.graph.versioning.merge`; :func:`compare` runs
batteries of searches on the updated graph and on a graph built from scratch from the model, and lists every difference.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pyarrow as pa

from ark.graph import EdgeTable, KnowledgeGraph, NodeTable, build_graph
from ark.graph.versioning.delta import EDGE_SCHEMA, GraphDelta, node_rows
from ark.index import open_index
from ark.methods.ark.options import ToolConfig
from ark.methods.ark.tools.toolbox import Toolbox

Edge = tuple[str, str, str]
SCORE_TOLERANCE = 1e-6
INDEXES = (("bm25", "fielded"), ("bm25", "plain"), ("bm25-rel", "fielded"), ("bm25-rel", "plain"))


class ContentModel:
    """Node rows by id (insertion order = node order) and the set of edges."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        table = node_rows(graph).to_pylist()
        self.nodes: dict[str, dict[str, Any]] = {row["id"]: row for row in table}
        src, dst, rel = graph.edges()
        self.edges: set[Edge] = {(graph.node_id(int(s)), graph.node_id(int(d)), graph.relation_types[int(r)])
                                 for s, d, r in zip(src, dst, rel, strict=True)}

    def apply(self, delta: GraphDelta) -> None:
        for node_id in delta.nodes_deleted.to_pylist():
            del self.nodes[node_id]
            self.edges = {e for e in self.edges if node_id not in (e[0], e[1])}
        for row in delta.nodes.to_pylist():
            self.nodes[row["id"]] = row  # a changed node keeps its place, a new one goes last
        self.edges -= set(_keys(delta.edges_removed))
        self.edges |= set(_keys(delta.edges_added))

    def rebuild(self) -> KnowledgeGraph:
        rows = list(self.nodes.values())
        nodes = NodeTable([r["id"] for r in rows], [r["type"] for r in rows], [r["name"] for r in rows],
                          [r["text"] for r in rows], [r["properties"] for r in rows], source="model")
        edges = sorted(self.edges)
        return build_graph(nodes, EdgeTable([e[0] for e in edges], [e[1] for e in edges], [e[2] for e in edges]),
                           metadata={"name": "rebuilt"})


def _keys(table: pa.Table) -> list[Edge]:
    return list(zip(*(table.column(c).to_pylist() for c in ("source", "target", "relation")), strict=True))


def random_delta(model: ContentModel, rng: random.Random, step: int) -> GraphDelta:
    """A random update: changed and new nodes (sometimes of a new type), deletions, edges added (sometimes of a new
    relation) and removed."""
    ids = list(model.nodes)
    words = sorted({w for row in model.nodes.values() for w in f"{row['name']} {row['text']}".split()})
    deleted = rng.sample(ids, k=min(rng.randint(0, 2), len(ids) - 3))
    survivors = [x for x in ids if x not in deleted]
    rows = []
    for node_id in rng.sample(survivors, k=min(rng.randint(0, 3), len(survivors))):
        row = dict(model.nodes[node_id])
        row["name"] = " ".join(rng.sample(words, k=2))
        row["text"] = row["name"] + "\n" + " ".join(rng.choices(words, k=rng.randint(0, 12)))
        if rng.random() < 0.2:
            row["type"] = f"kind{step}"
        rows.append(row)
    types = sorted({row["type"] for row in model.nodes.values()})
    for k in range(rng.randint(0, 3)):
        name = " ".join(rng.sample(words, k=2))
        node_type = f"newtype{step}" if rng.random() < 0.3 else rng.choice(types)
        props = json.dumps({"synonyms": [rng.choice(words)]}) if rng.random() < 0.5 else "{}"
        rows.append({"id": f"new:{step}:{k}", "type": node_type, "name": name,
                     "text": name + "\n" + " ".join(rng.choices(words, k=rng.randint(1, 10))), "properties": props})
    present = survivors + [r["id"] for r in rows if r["id"] not in survivors]
    relations = sorted({e[2] for e in model.edges}) or ["linked"]
    live = sorted(e for e in model.edges if e[0] not in deleted and e[1] not in deleted)
    removed = rng.sample(live, k=min(rng.randint(0, 3), len(live)))
    added: set[Edge] = set()
    for _ in range(rng.randint(0, 5)):
        relation = f"rel{step}" if rng.random() < 0.2 else rng.choice(relations)
        edge = (rng.choice(present), rng.choice(present), relation)
        if edge not in removed:
            added.add(edge)
    if not (rows or deleted or removed or added):
        added.add((present[0], present[1], "linked"))
    node_table = pa.Table.from_pylist(rows, schema=pa.schema([(c, pa.string()) for c in
                                                               ("id", "type", "name", "text", "properties")]))
    return GraphDelta(node_table, _edge_table(sorted(added)), _edge_table(removed), pa.array(deleted, pa.string()))


def _edge_table(edges: list[Edge]) -> pa.Table:
    return pa.table({"source": [e[0] for e in edges], "target": [e[1] for e in edges],
                     "relation": [e[2] for e in edges]}, schema=EDGE_SCHEMA)


def compare(updated: KnowledgeGraph, rebuilt: KnowledgeGraph, rng: random.Random, calls: int = 50) -> list[str]:
    """Every difference between the updated graph and the rebuild: node order, edges, and for each index setting
    drawn batteries of ``search_in_graph`` and ``search_in_neighborhood`` and direct top-k rankings (by node id,
    scores to 1e-6)."""
    problems = []
    if updated.nodes.column("id").to_pylist() != rebuilt.nodes.column("id").to_pylist():
        problems.append("node ids or order differ")
    if _edge_set(updated) != _edge_set(rebuilt):
        problems.append(f"edges differ: {sorted(_edge_set(updated) ^ _edge_set(rebuilt))[:5]}")
    words = sorted({w for i in range(rebuilt.num_nodes) for w in rebuilt.text(i).split()})
    names = [rebuilt.name(i) for i in range(rebuilt.num_nodes)]
    queries = [rng.choice(names) if rng.random() < 0.3 else " ".join(rng.sample(words, k=rng.randint(1, 3)))
               for _ in range(calls)]
    centres = [rebuilt.node_id(rng.randrange(rebuilt.num_nodes)) for _ in range(calls)]
    for kind, scoring in INDEXES:
        boxes = [Toolbox(g, open_index(g, kind, scoring=scoring, progress=False), ToolConfig(neighborhood_budget=500))
                 for g in (updated, rebuilt)]
        for query, centre in zip(queries, centres, strict=True):
            sides = [_battery(box, query, centre) for box in boxes]
            problems += [f"{kind}/{scoring} {what}: {a} != {b}" for what, a, b in _differences(*sides)]
    return problems


def _edge_set(graph: KnowledgeGraph) -> set[Edge]:
    src, dst, rel = graph.edges()
    return {(graph.node_id(int(s)), graph.node_id(int(d)), graph.relation_types[int(r)])
            for s, d, r in zip(src, dst, rel, strict=True)}


def _battery(box: Toolbox, query: str, centre: str) -> dict[str, list[tuple[str, float]]]:
    graph = box.graph
    out = {}
    hits = box.execute("search_in_graph", {"query": query, "size": 20}).data.results
    out[f"search_in_graph({query!r})"] = [(graph.node_id(h.index), h.score) for h in hits]
    direct = box.index.search(query, 30)
    out[f"top-k({query!r})"] = [(graph.node_id(i), s) for i, s in direct]
    out[f"matched terms({query!r})"] = [(f"{graph.node_id(i)}: {box.index.matched_terms(query, i)}", 0.0)
                                        for i, _ in direct[:5]]
    around = box.execute("search_in_neighborhood", {"node_index": graph.index_of(centre), "query": query})
    shown = [r.index for r in around.data.results]
    scores = box.index.score(query, shown).tolist() if shown else []
    # Neighbours the relevance does not tell apart come in CSR order (relation codes, which a rebuild numbers in
    # another order): ties are broken by node id on both sides.
    ranked = sorted(((graph.node_id(n), round(s, 6)) for n, s in zip(shown, scores, strict=True)),
                    key=lambda pair: (-pair[1], pair[0]))
    out[f"search_in_neighborhood({centre}, {query!r})"] = ranked
    return out


def _differences(a: dict, b: dict) -> list[tuple[str, Any, Any]]:
    found = []
    for what, left in a.items():
        right = b[what]
        same = len(left) == len(right) and all(
            x == y and abs(s - t) <= SCORE_TOLERANCE for (x, s), (y, t) in zip(left, right, strict=True))
        if not same:
            found.append((what, left[:5], right[:5]))
    return found
