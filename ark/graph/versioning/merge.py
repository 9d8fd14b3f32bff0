"""The graph of a version: a graph with deltas applied, without copying its node text or re-sorting its edges.

Node order: the earlier graph's nodes that survive, in their order, a changed node keeping its place (its row
replaced), then the nodes new in each delta in delta order (a node deleted and given again later is new again).
That is what applying the deltas one by one gives, and it numbers the surviving nodes monotonically, so:

- the node table is made of zero-copy slices of the earlier table between the changed and deleted rows, with the
  changed rows and the new ones (the only rows copied) in between: no text is copied or read;
- the adjacency is the earlier CSR with the entries of deleted nodes and removed edges masked out and its node
  indices renumbered (order kept, so rows stay sorted by (relation code, neighbour)), with the few added entries
  inserted at their sorted places: linear passes over the arrays instead of a sort of every edge.

An edge lives when it was added (in the earlier graph or a delta) after every removal of it and every deletion of
its endpoints; an edge added twice, or added while present, is kept once. The fingerprint is set by the caller
(:mod:`ark.graph.versioning.fingerprint`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...arrays import I64, Ints
from ..build import _schema
from ..errors import GraphValidationError
from ..store import KnowledgeGraph, SchemaTriple
from .rows import edge_keys, last_rows, numbered_types

if TYPE_CHECKING:
    from .delta import GraphDelta

TABLE_COLUMNS = ("id", "name", "text", "properties")


@dataclass
class NodePlan:
    """Where every node of the version comes from (see the module doc)."""

    base_pos: dict[str, int]  # touched id -> position in the earlier graph, -1 when absent
    last_delete: dict[str, int] = field(default_factory=dict)  # id -> last delta deleting it
    last_upsert: dict[str, tuple[int, int]] = field(default_factory=dict)  # live id -> (delta, row) of its row
    appended: dict[str, tuple[int, int]] = field(default_factory=dict)  # id new to the version -> its slot
    gone: set[str] = field(default_factory=set)  # ids of the earlier graph deleted at some point


def plan_nodes(base: KnowledgeGraph, deltas: list[GraphDelta]) -> NodePlan:
    """Apply the deltas' node deletions and upserts to ids alone, in order."""
    touched = pa.chunked_array([d.nodes.column("id").cast(pa.string()) for d in deltas]
                               + [d.nodes_deleted.cast(pa.string()) for d in deltas], pa.string())
    unique = pc.unique(touched)
    found = lookup(base, unique)
    plan = NodePlan(dict(zip(unique.to_pylist(), found.tolist(), strict=True)))
    for j, delta in enumerate(deltas, start=1):
        for x in delta.nodes_deleted.to_pylist():
            plan.last_delete[x] = j
            plan.appended.pop(x, None)
            plan.last_upsert.pop(x, None)
            if plan.base_pos[x] >= 0:
                plan.gone.add(x)
        for k, x in enumerate(delta.nodes.column("id").to_pylist()):
            plan.last_upsert[x] = (j, k)
            if x not in plan.appended and (plan.base_pos[x] < 0 or x in plan.gone):
                plan.appended[x] = (j, k)
    return plan


def lookup(graph: KnowledgeGraph, values: pa.Array | pa.ChunkedArray | list[str]) -> I64:
    """Positions of the ids ``values`` in ``graph``, -1 where absent: from its id table when it has built it (a
    graph held open), else by one vectorised look-up (building the table of every id costs more)."""
    if "_id_table" in graph.__dict__:
        items = values if isinstance(values, list) else values.to_pylist()
        return np.fromiter((graph._row_of(x) for x in items), np.int64, len(items))
    array = pa.array(values, pa.string()) if isinstance(values, list) else values
    return _positions(array, graph.nodes.column("id"))


def _positions(values: pa.Array | pa.ChunkedArray, ids: pa.Array | pa.ChunkedArray) -> I64:
    """Positions of ``values`` among ``ids``, -1 where absent."""
    value_set = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    found = pc.fill_null(pc.index_in(values, value_set=value_set), -1)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)


def merge_version(base: KnowledgeGraph, deltas: list[GraphDelta], metadata: Mapping[str, object]) -> KnowledgeGraph:
    """The graph of ``base`` with ``deltas`` applied in order (see the module doc)."""

    plan = plan_nodes(base, deltas)
    n0 = base.num_nodes
    keep = np.ones(n0, dtype=bool)
    keep[[plan.base_pos[x] for x in plan.gone]] = False
    new_index = np.cumsum(keep, dtype=np.int64) - 1
    new_index[~keep] = -1
    kept = int(keep.sum())
    in_place = sorted((plan.base_pos[x], plan.last_upsert[x]) for x in plan.last_upsert if x not in plan.appended)
    appended = sorted(plan.appended, key=plan.appended.__getitem__)
    n = kept + len(appended)
    if n == 0:
        raise GraphValidationError("the update would leave the graph without nodes")
    rows = _delta_rows(base, deltas)
    offsets = np.cumsum([0] + [d.nodes.num_rows for d in deltas])
    replaced = rows.take(pa.array([offsets[j - 1] + k for _, (j, k) in in_place], pa.int64()))
    added = rows.take(pa.array([offsets[plan.last_upsert[x][0] - 1] + plan.last_upsert[x][1] for x in appended],
                               pa.int64()))
    table = _node_table(base, keep, [p for p, _ in in_place], replaced, added)
    known = list(base.node_types)
    for delta in deltas:  # type names numbered as applying the deltas one by one would (the fingerprint reads them)
        known = numbered_types(known, last_rows(delta.nodes).column("type"))[0]
    code_of = {name: code for code, name in enumerate(known)}
    type_codes = np.empty(n, dtype=np.int16)
    type_codes[:kept] = np.asarray(base.node_type_codes)[keep]
    positions = new_index[[p for p, _ in in_place]]
    type_codes[positions] = [code_of[t] for t in replaced.column("type").to_pylist()]
    type_codes[kept:] = [code_of[t] for t in added.column("type").to_pylist()]
    relation_types = list(base.relation_types)
    for delta in deltas:
        for relation in pc.unique(delta.edges_added.column("relation")).to_pylist():
            if relation not in relation_types:
                relation_types.append(relation)
    appended_index = {x: kept + i for i, x in enumerate(appended)}
    indptr, neighbors, codes = _merge_adjacency(base, deltas, plan, keep, new_index, appended_index,
                                                relation_types, n)
    schema = _csr_schema(indptr, neighbors, codes, type_codes, known, relation_types)
    return KnowledgeGraph(table, type_codes, known, relation_types, indptr, neighbors, codes,
                          schema, metadata)


def _delta_rows(base: KnowledgeGraph, deltas: list[GraphDelta]) -> pa.Table:
    """Every delta's node rows in one table, its columns of the base table's types (chunks must share them)."""
    types = {c: base.nodes.schema.field(c).type for c in TABLE_COLUMNS}
    parts = [pa.table({**{c: d.nodes.column(c).cast(types[c]) for c in TABLE_COLUMNS},
                       "type": d.nodes.column("type").cast(pa.string())}) for d in deltas]
    return pa.concat_tables(parts).combine_chunks()


def _node_table(base: KnowledgeGraph, keep: Ints, in_place: list[int], replaced: pa.Table,
                added: pa.Table) -> pa.Table:
    """The version's node table: runs of the base table (zero-copy slices) between its deleted and changed rows,
    the changed rows in their places, the new rows after. A changed row keeps its id, so the (small) id column is
    the kept ids and the new ones, as one array."""
    n0 = len(keep)
    replaced_at = np.zeros(n0, dtype=bool)
    replaced_at[in_place] = True
    breaks = np.flatnonzero(~keep | replaced_at)
    starts = np.concatenate([[0], breaks + 1])  # run k: base rows starts[k]:stops[k], then break k (if any)
    stops = np.concatenate([breaks, [n0]])
    runs = [(int(a), int(b)) for a, b in zip(starts.tolist(), stops.tolist(), strict=True)]
    swap = replaced_at[breaks].tolist() + [False]
    ids = base.nodes.column("id")
    columns = {"id": pa.chunked_array([pa.concat_arrays([*pc.filter(ids, pa.array(keep)).chunks,
                                                         *added.column("id").cast(ids.type).chunks])], ids.type)}
    for c in TABLE_COLUMNS[1:]:
        column = base.nodes.column(c)
        rows = replaced.column(c).combine_chunks()
        out = _slices(column.chunks, runs, swap, rows) + list(added.column(c).chunks)
        columns[c] = pa.chunked_array(out, column.type)
    return pa.table(columns)


def _slices(chunks: list[pa.Array], runs: list[tuple[int, int]], swap: list[bool], rows: pa.Array
            ) -> list[pa.Array]:
    """Zero-copy slices of ``chunks`` (one column) for each run of rows, each followed by the next replaced row
    where ``swap`` says so: one pass over the runs and chunks together (Arrow's ``ChunkedArray.slice`` walks the
    chunks from the first each time: quadratic over a merged version's many chunks)."""
    out: list[pa.Array] = []
    k, chunk_start, r = 0, 0, 0
    for (start, stop), then in zip(runs, swap, strict=True):
        while start < stop:
            while start >= chunk_start + len(chunks[k]):
                chunk_start += len(chunks[k])
                k += 1
            chunk = chunks[k]
            take = min(chunk_start + len(chunk), stop) - start
            out.append(chunk.slice(start - chunk_start, take))
            start += take
        if then:
            out.append(rows.slice(r, 1))
            r += 1
    return out


def _merge_adjacency(base: KnowledgeGraph, deltas: list[GraphDelta], plan: NodePlan, keep: Ints,
                     new_index: Ints, appended_index: dict[str, int], relation_types: list[str], n: int
                     ) -> tuple[Ints, Ints, Ints]:
    """(indptr, neighbours, codes) of the version (see the module doc)."""
    indptr0 = np.asarray(base.indptr, dtype=np.int64)
    neighbors0, codes0 = np.asarray(base.neighbor_array), np.asarray(base.code_array)
    alive = np.repeat(keep, np.diff(indptr0))
    alive &= keep[neighbors0]
    alive[_removed_base_entries(base, deltas, plan)] = False
    live = np.zeros(len(alive) + 1, dtype=np.int64)
    np.cumsum(alive, out=live[1:])
    kept_indptr = np.zeros(n + 1, dtype=np.int64)  # the surviving entries' rows (new nodes' rows empty)
    kept_indptr[1:len(keep) + 1 - int((~keep).sum())] = live[indptr0[1:]][keep]
    kept_indptr[len(keep) + 1 - int((~keep).sum()):] = live[-1]
    neighbors = new_index.astype(np.int32)[neighbors0[alive]]
    codes = np.asarray(codes0[alive], dtype=np.int16)
    del alive, live
    add_rows, add_codes, add_neighbors = _added_entries(base, deltas, plan, new_index, appended_index,
                                                        relation_types)
    at, there = search_rows(kept_indptr, codes, neighbors, add_rows, add_codes, add_neighbors)
    num_codes = 2 * max(len(relation_types), 1)
    order = np.lexsort((add_neighbors, add_codes, add_rows))  # equal entries adjacent, inserted in row order
    key = (add_rows * num_codes + add_codes) * n + add_neighbors
    first = np.ones(len(order), dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    order = order[first & ~there[order]]
    at, add_rows, add_codes, add_neighbors = at[order], add_rows[order], add_codes[order], add_neighbors[order]
    counts = np.diff(kept_indptr) + np.bincount(add_rows, minlength=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return (indptr, np.insert(neighbors, at, add_neighbors.astype(np.int32)),
            np.insert(codes, at, add_codes.astype(np.int16)))


def search_rows(indptr: Ints, codes: Ints, neighbors: Ints, rows: Ints,
                row_codes: Ints, row_neighbors: Ints) -> tuple[Ints, Ints]:
    """For each wanted entry (row, code, neighbour) of a CSR whose rows are sorted by (code, neighbour): where it is
    or would be inserted, and whether it is there. A binary search in every row at once (numpy), so a delta's tens
    of thousands of look-ups cost a few passes over them rather than a Python loop."""
    scale = np.int64(max(int(len(indptr)) - 1, 1))
    rows = np.asarray(rows, dtype=np.int64)
    target = np.asarray(row_codes, dtype=np.int64) * scale + np.asarray(row_neighbors, dtype=np.int64)
    low, high = np.asarray(indptr[rows], np.int64), np.asarray(indptr[rows + 1], np.int64)
    end = high.copy()
    last = max(len(codes) - 1, 0)
    active = low < high
    while active.any():
        mid = np.minimum((low + high) // 2, last)
        key = np.asarray(codes[mid], np.int64) * scale + np.asarray(neighbors[mid], np.int64)
        right = active & (key < target)
        left = active & ~right
        low = np.where(right, mid + 1, low)
        high = np.where(left, mid, high)
        active = low < high
    at = np.minimum(low, last)
    found = (low < end) & (np.asarray(codes[at], np.int64) * scale + np.asarray(neighbors[at], np.int64) == target) \
        if len(codes) else np.zeros(len(rows), dtype=bool)
    return low, found


def find_entries(graph: KnowledgeGraph, rows: list[int] | Ints, codes: list[int] | Ints,
                 neighbors: list[int] | Ints) -> Ints:
    """CSR positions of the entries (row, code, neighbour) of ``graph``, -1 where absent."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    at, found = search_rows(np.asarray(graph.indptr), np.asarray(graph.code_array), np.asarray(graph.neighbor_array),
                            np.asarray(rows), np.asarray(codes), np.asarray(neighbors))
    return np.where(found, at, -1)


def _removed_base_entries(base: KnowledgeGraph, deltas: list[GraphDelta], plan: NodePlan) -> Ints:
    """CSR positions (both directions) of the earlier graph's edges a delta removes explicitly (edges of deleted
    nodes are masked with their nodes)."""

    code_of = {name: code for code, name in enumerate(base.relation_types)}
    removed = {key for delta in deltas for key in edge_keys(delta.edges_removed)}
    wanted = [(s, t, r) for s, t, r in removed if r in code_of and s not in plan.gone and t not in plan.gone]
    if not wanted:
        return np.zeros(0, dtype=np.int64)
    ends = lookup(base, [x for s, t, _ in wanted for x in (s, t)])
    src, dst = ends[0::2].tolist(), ends[1::2].tolist()
    rel = [code_of[r] for _, _, r in wanted]
    ok = [k for k in range(len(wanted)) if src[k] >= 0 and dst[k] >= 0]
    out = find_entries(base, [src[k] for k in ok], [2 * rel[k] for k in ok], [dst[k] for k in ok])
    back = find_entries(base, [dst[k] for k in ok], [2 * rel[k] + 1 for k in ok], [src[k] for k in ok])
    found = np.concatenate([out, back])
    return found[found >= 0]


def _added_entries(base: KnowledgeGraph, deltas: list[GraphDelta], plan: NodePlan, new_index: Ints,
                   appended_index: dict[str, int], relation_types: list[str]
                   ) -> tuple[Ints, Ints, Ints]:
    """(row, code, neighbour) of both entries of every edge a delta adds that lives on, in the version's
    numbering (unsorted, possibly repeated)."""

    removed_last: dict[tuple[str, str, str], int] = {}
    for j, delta in enumerate(deltas, start=1):
        for key in edge_keys(delta.edges_removed):
            removed_last[key] = j
    live: dict[tuple[str, str, str], int] = {}
    last_delete = plan.last_delete
    for j, delta in enumerate(deltas, start=1):
        for key in edge_keys(delta.edges_added):
            if removed_last.get(key, 0) <= j and last_delete.get(key[0], 0) <= j and last_delete.get(key[1], 0) <= j:
                live[key] = j
    if not live:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    ids = [x for s, t, _ in live for x in (s, t)]
    found = lookup(base, ids)
    index = np.where(found >= 0, new_index[np.maximum(found, 0)], -1)
    for k, x in enumerate(ids):
        if x in appended_index:
            index[k] = appended_index[x]
    code_of = {name: code for code, name in enumerate(relation_types)}
    src, dst = index[0::2], index[1::2]
    rel = np.fromiter((code_of[r] for _, _, r in live), np.int64, len(live))
    ok = (src >= 0) & (dst >= 0)
    src, dst, rel = src[ok], dst[ok], rel[ok]
    return np.concatenate([src, dst]), np.concatenate([2 * rel, 2 * rel + 1]), np.concatenate([dst, src])


def _csr_schema(indptr: Ints, neighbors: Ints, codes: Ints, type_codes: Ints,
                node_types: list[str], relation_types: list[str]) -> list[SchemaTriple]:
    """The (source type, relation, target type) counts of the version's outgoing entries."""
    outgoing = (codes & 1) == 0
    rows = np.repeat(np.arange(len(indptr) - 1, dtype=np.int32), np.diff(indptr))[outgoing]
    return _schema(type_codes[rows].astype(np.int64), (codes[outgoing] >> 1).astype(np.int64),
                   type_codes[neighbors[outgoing]].astype(np.int64), node_types, relation_types)
