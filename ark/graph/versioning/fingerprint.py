"""The fingerprint of a graph version, updated by an update's changes instead of hashing the whole graph again.

A base keeps the fingerprint it was saved with (a hash of every node's id, name and text and of the adjacency,
:func:`ark.graph.build.build_graph_from_arrays`). A version made by updates (format 2) has

    blake2b(FORMAT, base fingerprint, node sums, edge sums, the node ids in order, node types, relation types)

where the node sums add (modulo 2**64, two lanes) a 128-bit hash of every node row (id, type, name, text,
properties) of the version and subtract those of the base, and the edge sums do the same over every edge's
(source id, target id, relation) hash. Sums do not depend on order, so an update changes them by the hashes of the
rows and edges it adds and removes alone (:func:`change_sums`): its cost follows the update, not the graph. The
ids in order (a few bytes a node) pin the numbering that node indices, caches and trajectories rely on.
:func:`content_sums` computes the sums of a whole graph from scratch: the oracle the tests and
:func:`recompute_fingerprint` check the incremental sums against.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ...arrays import I64, sorted_unique
from ..build import _string_buffers
from ..csr import entry_blocks, row_positions
from .merge import find_entries, lookup
from .rows import NODE_COLUMNS, edge_keys, last_rows, node_rows

if TYPE_CHECKING:
    from ..store import KnowledgeGraph
    from .delta import GraphDelta

FORMAT = b"ark-version-fingerprint-2"
U64: TypeAlias = npt.NDArray[np.uint64]  # (rows, LANES) 64-bit hash lanes
LANES = 2
MASK = (1 << 64) - 1
WINDOW = 65536
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


def zero_sums() -> dict[str, list[int]]:
    return {"nodes": [0] * LANES, "edges": [0] * LANES}


def row_hashes(columns: list[pa.Array | pa.ChunkedArray]) -> U64:
    """(rows, 2) uint64: a 128-bit hash of each node row, given as its columns (id, type, name, text, properties):
    each field prefixed by its length in bytes (null as empty), joined by Arrow, hashed once."""
    parts = []
    for column in columns:
        values = pc.fill_null(column.cast(pa.string()), "")
        parts += [pc.cast(pc.binary_length(values), pa.string()), values]
    if not len(parts[0]):
        return np.zeros((0, LANES), dtype=np.uint64)
    joined = pc.binary_join_element_wise(*parts, ":")
    data = b"".join(hashlib.blake2b(x, digest_size=16).digest() for x in pc.cast(joined, pa.binary()).to_pylist())
    return np.frombuffer(data, dtype="<u8").reshape(-1, LANES).astype(np.uint64)


def id_hashes(ids: Iterable[str]) -> U64:
    """(ids, 2) uint64: a 128-bit hash of each node id (or relation name)."""
    data = b"".join(hashlib.blake2b(x.encode("utf-8"), digest_size=16).digest() for x in ids)
    return np.frombuffer(data, dtype="<u8").reshape(-1, LANES).astype(np.uint64)


def edge_hashes(source: U64, target: U64, relation: U64) -> U64:
    """(edges, 2) uint64 hashes of edges from the (edges, 2) hashes of their source id, target id and relation:
    a splitmix64 finaliser over an asymmetric combination (``a -> b`` and ``b -> a`` differ)."""
    with np.errstate(over="ignore"):
        x: U64 = np.asarray(source * _MIX[0] + target * _MIX[1] + relation * _MIX[2], dtype=np.uint64)
        for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, 0)):
            x = np.bitwise_xor(x, np.right_shift(x, np.uint64(shift)))
            if factor:
                x = np.multiply(x, np.uint64(factor))
    return x


def lane_sums(hashes: U64) -> list[int]:
    """Each lane's sum modulo 2**64."""
    with np.errstate(over="ignore"):
        return [int(v) for v in np.asarray(np.sum(hashes.reshape(-1, LANES), axis=0, dtype=np.uint64)).tolist()]


def add_sums(a: dict[str, list[int]], b: dict[str, list[int]], sign: int = 1) -> dict[str, list[int]]:
    return {k: [(x + sign * y) & MASK for x, y in zip(a[k], b[k], strict=True)] for k in ("nodes", "edges")}


def edge_sums(edges: Iterable[tuple[str, str, str]]) -> list[int]:
    """The lane sums of the hashes of ``edges`` ((source id, target id, relation) triples)."""
    edges = list(edges)
    if not edges:
        return [0] * LANES
    names = list({x for e in edges for x in e})
    number = {name: k for k, name in enumerate(names)}
    hashes = id_hashes(names)
    columns = [hashes[np.fromiter((number[e[k]] for e in edges), np.int64, len(edges))] for k in range(3)]
    return lane_sums(edge_hashes(*columns))


def content_sums(graph: KnowledgeGraph) -> dict[str, list[int]]:
    """The node and edge sums of a whole graph, from scratch (see the module doc)."""

    table, nodes = node_rows(graph), [0] * LANES
    for start in range(0, table.num_rows, WINDOW):  # a window of rows at a time: memory bounded on large graphs
        window = table.slice(start, WINDOW)
        part = lane_sums(row_hashes([window.column(c) for c in window.column_names]))
        nodes = [(a + b) & MASK for a, b in zip(nodes, part, strict=True)]
    ids = id_hashes(graph.nodes.column("id").to_pylist())
    relations = id_hashes(graph.relation_types)
    edges = [0] * LANES
    for rows, neighbors, codes in entry_blocks(graph):  # a block of CSR rows at a time, not every edge at once
        out = (codes & 1) == 0  # an edge's outgoing entry, in its source's row
        part = lane_sums(edge_hashes(ids[rows[out]], ids[neighbors[out]], relations[codes[out] >> 1]))
        edges = [(a + b) & MASK for a, b in zip(edges, part, strict=True)]
    return {"nodes": nodes, "edges": edges}


def version_fingerprint(base_fingerprint: str | None, sums: dict[str, list[int]], ids: pa.ChunkedArray | pa.Array,
                        node_types: list[str], relation_types: list[str]) -> str:
    """The format-2 fingerprint of a version (see the module doc); ``sums``: relative to its base."""

    digest = hashlib.blake2b(FORMAT, digest_size=16)
    digest.update(json.dumps([base_fingerprint, sums["nodes"], sums["edges"], node_types, relation_types],
                             ensure_ascii=False).encode("utf-8"))
    column = ids if isinstance(ids, pa.ChunkedArray) else pa.chunked_array([ids])
    for buffer in _string_buffers(column):
        digest.update(buffer)
    return digest.hexdigest()


def sums_to_json(sums: dict[str, list[int]]) -> dict[str, list[str]]:
    return {k: [f"{x:016x}" for x in v] for k, v in sums.items()}


def sums_from_json(data: Mapping[str, Sequence[str]]) -> dict[str, list[int]]:
    return {k: [int(x, 16) for x in data[k]] for k in ("nodes", "edges")}


def change_sums(current: KnowledgeGraph, delta: GraphDelta) -> dict[str, list[int]]:
    """How ``delta`` changes the sums of the graph ``current`` it applies to: the hashes of the rows it writes and
    of the edges it adds (those ``current`` lacks) added, those of the rows it replaces or deletes and of the edges
    it removes (explicitly, or with a deleted node) subtracted. Reads only the rows and edges the delta touches."""

    rows = last_rows(delta.nodes).select(list(NODE_COLUMNS))
    added = sorted(set(edge_keys(delta.edges_added)))
    upserted, deleted_ids = rows.column("id").to_pylist(), delta.nodes_deleted.to_pylist()
    found = lookup(current, upserted + deleted_ids + [x for s, t, _ in added for x in (s, t)])
    replaced, deleted = found[:len(upserted)], found[len(upserted):len(upserted) + len(deleted_ids)]
    ends = found[len(upserted) + len(deleted_ids):]
    gone = rows_at(current, np.concatenate([replaced[replaced >= 0], deleted]))
    nodes = [(a - b) & MASK for a, b in zip(lane_sums(row_hashes(rows.columns)), lane_sums(row_hashes(gone)),
                                            strict=True)]
    relations = current.relation_types
    minus = _removed_edge_sums(current, deleted, delta)
    code_of = {name: code for code, name in enumerate(relations)}
    known = [k for k, (s, t, r) in enumerate(added) if ends[2 * k] >= 0 and ends[2 * k + 1] >= 0 and r in code_of]
    present = find_entries(current, [int(ends[2 * k]) for k in known], [2 * code_of[added[k][2]] for k in known],
                           [int(ends[2 * k + 1]) for k in known]) >= 0
    existing = {added[k] for k, yes in zip(known, present.tolist(), strict=True) if yes}
    plus = edge_sums(e for e in added if e not in existing)
    edges = [(a - b) & MASK for a, b in zip(plus, minus, strict=True)]
    return {"nodes": nodes, "edges": edges}


def _removed_edge_sums(current: KnowledgeGraph, deleted: I64, delta: GraphDelta) -> list[int]:
    """The lane sums of the edges ``delta`` removes from ``current``: those of its deleted nodes (``deleted``, their
    indices; read from their CSR rows) and those it names, each once."""

    n = max(current.num_nodes, 1)
    positions, lengths = row_positions(current.indptr, deleted)
    rows, others = np.repeat(deleted, lengths), np.asarray(current.neighbor_array)[positions].astype(np.int64)
    codes = np.asarray(current.code_array)[positions].astype(np.int64)
    out = (codes & 1) == 0
    named = edge_keys(delta.edges_removed)
    ends = lookup(current, [x for s, t, _ in named for x in (s, t)])
    code_of = {name: code for code, name in enumerate(current.relation_types)}
    src = np.concatenate([np.where(out, rows, others), ends[0::2]])
    dst = np.concatenate([np.where(out, others, rows), ends[1::2]])
    rel = np.concatenate([codes >> 1, np.fromiter((code_of[r] for _, _, r in named), np.int64, len(named))])
    if not len(src):
        return [0] * LANES
    key = sorted_unique((src * n + dst) * len(code_of) + rel)
    rel, pair = key % len(code_of), key // len(code_of)
    src, dst = pair // n, pair % n
    nodes = sorted_unique(np.concatenate([src, dst]))
    hashes = id_hashes(take_sorted(current.nodes.column("id"), nodes).to_pylist())
    relation_hashes = id_hashes(current.relation_types)
    return lane_sums(edge_hashes(hashes[np.searchsorted(nodes, src)], hashes[np.searchsorted(nodes, dst)],
                                 relation_hashes[rel]))


def rows_at(graph: KnowledgeGraph, indices: I64) -> list[pa.Array]:
    """The columns (id, type, name, text, properties) of nodes ``indices`` of ``graph``, in ascending index order."""
    at = np.sort(np.asarray(indices, dtype=np.int64))
    codes = np.asarray(graph.node_type_codes)[at].astype(np.int64)
    types = pa.array(graph.node_types, pa.string()).take(pa.array(codes))
    return [take_sorted(graph.nodes.column("id"), at), types,
            *(take_sorted(graph.nodes.column(c), at) for c in ("name", "text", "properties"))]


def take_sorted(column: pa.ChunkedArray, at: I64) -> pa.Array:
    """``column``'s values at the ascending positions ``at``, taken chunk by chunk (Arrow's ``take`` on a chunked
    column concatenates every chunk first: gigabytes of node text copied to read a few thousand rows)."""
    chunks = column.chunks
    starts = np.cumsum([0] + [len(c) for c in chunks])
    bounds = np.searchsorted(at, starts)
    parts = [chunks[k].take(pa.array(at[bounds[k]:bounds[k + 1]] - starts[k]))
             for k in range(len(chunks)) if bounds[k + 1] > bounds[k]]
    return pa.concat_arrays(parts) if parts else pa.array([], column.type)
