"""One update of a graph as a typed record (:class:`GraphDelta`), its files, and the merge of a base with deltas.

A delta holds the rows of new or changed nodes (upserts: id, type, name, text, properties), the edges added and
removed (source id, target id, relation) and the ids of deleted nodes; deleting a node deletes its edges. Within
one delta, deletions apply first, then upserts, then edge removals, then edge additions; a delta that both
deletes and upserts a node, or both adds and removes an edge, is refused.

:func:`merge_version` turns a base graph and its deltas into the graph of a version without replaying them one by
one: node order is the base's surviving nodes in base order, then each delta's upserted rows in delta order, a
node changed again later moving to its latest place (what applying the deltas in turn would give); an edge lives
when it was added (in the base or a delta) after every removal of it and every deletion of its endpoints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..storage.checksums import check_files, file_records
from .errors import GraphValidationError, describe_values
from .store import KnowledgeGraph

NODE_COLUMNS = ("id", "type", "name", "text", "properties")
EDGE_SCHEMA = pa.schema([("source", pa.string()), ("target", pa.string()), ("relation", pa.string())])
FILES = {"nodes": "nodes.arrow", "edges_added": "edges_added.arrow", "edges_removed": "edges_removed.arrow",
         "nodes_deleted": "nodes_deleted.arrow"}


def empty_edges() -> pa.Table:
    return EDGE_SCHEMA.empty_table()


def empty_nodes() -> pa.Table:
    return pa.schema([(name, pa.string()) for name in NODE_COLUMNS]).empty_table()


@dataclass
class GraphDelta:
    """One update: node upserts, deleted node ids, edges added and removed (string ids; see the module doc)."""

    nodes: pa.Table
    edges_added: pa.Table
    edges_removed: pa.Table
    nodes_deleted: pa.Array

    @classmethod
    def empty(cls) -> GraphDelta:
        return cls(empty_nodes(), empty_edges(), empty_edges(), pa.array([], pa.string()))

    def counts(self) -> dict[str, int]:
        return {"nodes_upserted": self.nodes.num_rows, "nodes_deleted": len(self.nodes_deleted),
                "edges_added": self.edges_added.num_rows, "edges_removed": self.edges_removed.num_rows}

    def is_empty(self) -> bool:
        return not any(self.counts().values())

    def check_consistent(self) -> None:
        """Refuse a delta that deletes and upserts one node, or adds and removes one edge (naming them)."""
        both = pc.filter(self.nodes_deleted, pc.is_in(self.nodes_deleted, self.nodes.column("id"))).to_pylist()
        if both:
            raise GraphValidationError("node id(s) both deleted and given as nodes in one update: "
                                       + describe_values(both, len(both)))
        added, removed = edge_keys(self.edges_added), edge_keys(self.edges_removed)
        clash = sorted(set(added) & set(removed))
        if clash:
            raise GraphValidationError("edge(s) both added and deleted in one update: "
                                       + describe_values(clash, len(clash)))

    def save(self, directory: Path) -> dict[str, Any]:
        """Write the delta's files into ``directory``; returns their checksum records."""
        tables = {"nodes": self.nodes.select(list(NODE_COLUMNS)), "edges_added": self.edges_added,
                  "edges_removed": self.edges_removed,
                  "nodes_deleted": pa.table({"id": self.nodes_deleted})}
        for key, table in tables.items():
            with pa.OSFile(str(directory / FILES[key]), "wb") as sink, \
                    pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        records = file_records(directory, list(FILES.values()))
        (directory / "delta.json").write_text(json.dumps({"counts": self.counts(), "files": records}, indent=1))
        return records

    @classmethod
    def load(cls, directory: Path, records: dict[str, Any], fix: str) -> GraphDelta:
        """The delta saved in ``directory``, its files checked against ``records`` (the manifest's)."""
        check_files(directory, records, fix)
        tables = {}
        for key, name in FILES.items():
            with pa.OSFile(str(directory / name)) as source:
                tables[key] = pa.ipc.open_file(source).read_all()
        return cls(tables["nodes"], tables["edges_added"], tables["edges_removed"],
                   tables["nodes_deleted"].column("id").combine_chunks())


def edge_keys(edges: pa.Table) -> list[tuple[str, str, str]]:
    columns = [edges.column(c).to_pylist() for c in ("source", "target", "relation")]
    return list(zip(*columns, strict=True))


def node_rows(graph: KnowledgeGraph) -> pa.Table:
    """The graph's node table with its ``type`` column (id, type, name, text, properties)."""
    types = pa.array(graph.node_types, pa.string()).take(pa.array(np.asarray(graph.node_type_codes, np.int64)))
    nodes = graph.nodes
    columns = {c: nodes.column(c) if c != "type" else types for c in NODE_COLUMNS}
    return pa.table(columns)


def merge_version(base: KnowledgeGraph, deltas: list[GraphDelta], metadata: dict[str, Any]) -> KnowledgeGraph:
    """The graph of ``base`` with ``deltas`` applied in order (see the module doc)."""
    from .build import build_graph_from_arrays

    last_upsert: dict[str, tuple[int, int]] = {}
    last_delete: dict[str, int] = {}
    for j, delta in enumerate(deltas, start=1):
        for node_id in delta.nodes_deleted.to_pylist():
            last_delete[node_id] = j
        for k, node_id in enumerate(delta.nodes.column("id").to_pylist()):
            last_upsert[node_id] = (j, k)
    touched = pa.array(list(last_upsert.keys() | last_delete.keys()), pa.string())
    base_rows = node_rows(base)
    base_ids = base_rows.column("id")
    parts = [base_rows.filter(pc.invert(pc.is_in(base_ids, touched)))]
    for j, delta in enumerate(deltas, start=1):
        ids = delta.nodes.column("id").to_pylist()
        keep = [last_upsert[x] == (j, k) and last_delete.get(x, 0) < j for k, x in enumerate(ids)]
        parts.append(delta.nodes.select(list(NODE_COLUMNS)).filter(pa.array(keep, pa.bool_())))
    table = pa.concat_tables(parts).combine_chunks()
    final_ids = table.column("id")
    n = table.num_rows
    if n == 0:
        raise GraphValidationError("the update would leave the graph without nodes")
    known = list(base.node_types)
    for delta in deltas:  # type names numbered as applying the deltas one by one would (the fingerprint reads them)
        known = _codes(known, _last_rows(delta.nodes).column("type"))[0]
    node_types, type_codes = _codes(known, table.column("type"))
    relation_types = list(base.relation_types)
    for delta in deltas:
        for relation in delta.edges_added.column("relation").to_pylist():
            if relation not in relation_types:
                relation_types.append(relation)
    src, dst, rel = _live_edges(base, deltas, final_ids, last_delete, relation_types, n)
    return build_graph_from_arrays(table, type_codes, node_types, src, dst, rel, relation_types, metadata=metadata)


def _last_rows(nodes: pa.Table) -> pa.Table:
    """The rows of ``nodes`` that are the last for their id (an id given twice in one update keeps its last row)."""
    ids = nodes.column("id").to_pylist()
    last = {node_id: k for k, node_id in enumerate(ids)}
    return nodes.filter(pa.array([last[x] == k for k, x in enumerate(ids)], pa.bool_()))


def _codes(known: list[str], column: pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    names = list(known)
    for value in pc.unique(column).to_pylist():
        if value not in names:
            names.append(value)
    codes = pc.index_in(column, value_set=pa.array(names, pa.string()))
    return names, np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.int16)


def _index_in(values: pa.Array | pa.ChunkedArray, ids: pa.ChunkedArray) -> np.ndarray:
    """Positions of ``values`` among the final ids, -1 where absent."""
    found = pc.fill_null(pc.index_in(values, value_set=ids.combine_chunks()), -1)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)


def _live_edges(base: KnowledgeGraph, deltas: list[GraphDelta], final_ids: pa.ChunkedArray,
                last_delete: dict[str, int], relation_types: list[str], n: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source, target, relation code) of every edge alive after the deltas, in final numbering."""
    r = max(len(relation_types), 1)
    rel_code = {name: code for code, name in enumerate(relation_types)}
    deleted_at = np.zeros(n, dtype=np.int64)
    if last_delete:
        where = _index_in(pa.array(list(last_delete), pa.string()), final_ids)
        values = np.fromiter(last_delete.values(), np.int64, len(last_delete))
        deleted_at[where[where >= 0]] = values[where >= 0]
    removed_at: dict[int, int] = {}  # edge key -> last removal
    added: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
    for j, delta in enumerate(deltas, start=1):
        s, d, c = _edge_arrays(delta.edges_removed, final_ids, rel_code)
        for key in ((s * n + d) * r + c).tolist():
            removed_at[key] = j
        added.append((*_edge_arrays(delta.edges_added, final_ids, rel_code), j))
    base_src, base_dst, base_rel = base.edges()
    to_final = _index_in(base.nodes.column("id"), final_ids)
    added.insert(0, (to_final[base_src], to_final[np.asarray(base_dst)], np.asarray(base_rel, np.int64), 0))
    keep_parts = []
    for s, d, c, when in added:
        ok = (s >= 0) & (d >= 0)
        s, d, c = s[ok], d[ok], c[ok]
        alive = (deleted_at[s] <= when) & (deleted_at[d] <= when)
        if removed_at:
            last = _last_removal(removed_at, (s * n + d) * r + c)
            alive &= last < when if when else last < 0
        keep_parts.append((s[alive], d[alive], c[alive]))
    return tuple(np.concatenate([p[i] for p in keep_parts]) for i in range(3))  # type: ignore[return-value]


def _last_removal(removed_at: dict[int, int], keys: np.ndarray) -> np.ndarray:
    """The delta that last removed each edge key, -1 where none did (a search among the few removed keys, not a
    dictionary look-up per edge: the base has millions)."""
    removed = np.fromiter(removed_at, np.int64, len(removed_at))
    order = np.argsort(removed)
    removed, when = removed[order], np.fromiter(removed_at.values(), np.int64, len(removed_at))[order]
    at = np.minimum(np.searchsorted(removed, keys), len(removed) - 1)
    return np.where(removed[at] == keys, when[at], -1)


def _edge_arrays(edges: pa.Table, final_ids: pa.ChunkedArray, rel_code: dict[str, int]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = _index_in(edges.column("source"), final_ids)
    d = _index_in(edges.column("target"), final_ids)
    c = np.fromiter((rel_code.get(x, -1) for x in edges.column("relation").to_pylist()), np.int64, edges.num_rows)
    ok = c >= 0
    return np.where(ok, s, -1), np.where(ok, d, -1), np.where(ok, c, 0)
