"""Streaming import of a GRBench ``graph.json`` into an ARK graph directory, in memory bounded by a chunk size.

:func:`ark.loaders.grbench.load_grbench` reads the file whole (``json.load``): fine for fixtures, not for the
released Amazon (~9M nodes) or Freelaw (~84M nodes) graphs. Here the file is parsed incrementally with ``ijson``
(its C backend) in two passes:

1. nodes, one at a time, written ``chunk_size`` rows at a time as record batches of ``nodes.arrow`` inside the
   atomic temporary directory; only each id's 64-bit hash and type code stay in memory (10 bytes a node), sorted
   afterwards into an exact id -> row index (:class:`ark.loaders.id_index.IdIndex`);
2. the neighbor lists, ``EDGE_CHUNK`` neighbors at a time, resolved against that index into integer edges appended
   to a scratch file on disk (:class:`ark.graph.spilled.EdgeSpill`).

The CSR arrays are then packed from that file by an external bucket sort (:func:`ark.graph.spilled.write_spilled_csr`)
straight into the graph's ``.npy`` files, and the fingerprint is computed from the written files a batch at a time,
so neither the node text nor the edge list ever sits in memory whole: resident memory is ~30 bytes a node plus one
chunk. The result is the graph :func:`load_grbench` builds (same ids, names, texts, edges and fingerprint); the tests
keep that loader as oracle.
"""

from __future__ import annotations

import json
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa

from ark.graph import GraphValidationError, normalize_name
from ark.graph.spilled import EdgeSpill
from ark.graph.storage import check_graph_target, check_source_outside_target
from ark.storage.atomic import atomic_directory

from . import id_index
from .grbench import NODE_KEY_SUFFIX, _edge_types, _graph_file, _node_name, dropped_example, report_dropped
from .id_index import IdIndex
from .tabular import node_text
from .tabular_stream import write_streamed_graph

DEFAULT_CHUNK_SIZE = 20_000
EDGE_CHUNK = 1 << 18  # neighbor ids resolved at a time (their strings and the arrays: ~30 MB)
CHUNK_BYTES = 8_000_000  # a batch is also cut at this much text, so long-text nodes keep batches small
NODE_SCHEMA = pa.schema([("id", pa.string()), ("name", pa.string()), ("text", pa.string()),
                         ("properties", pa.string())])
# Measured on the generated 217 MB fixture (benchmarks/bench_grbench_import.py, 2-core machine under load, 2026-11-26):
# 5.5 MB/s of graph.json. Disk at the import's peak (benchmarks/bench_rehearsal.py, same day): 1.6x graph.json for the
# Amazon shape (nodes.arrow, plus 28 bytes an edge of scratch while the CSR is packed: the spill and its buckets) and
# 2.4x for the Freelaw shape (long texts: nodes.arrow holds each node's text and its features again as properties).
# The estimate rounds both up.
RATE_BYTES_PER_S = 4e6
DISK_FACTOR = 2.5

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ImportEstimate:
    input_bytes: int
    disk_bytes: int
    seconds: float

    def describe(self) -> str:
        return (f"graph.json is {self.input_bytes / 1e6:,.1f} MB: the import needs up to ~{self.disk_bytes / 1e6:,.1f} "
                f"MB of disk and ~{_duration(self.seconds)} (at ~{RATE_BYTES_PER_S / 1e6:.0f} MB/s, measured on a "
                "loaded 2-core machine)")


def estimate_import(path: str | Path) -> ImportEstimate:
    """Disk and time a streaming import of ``path`` (a ``graph.json`` or its folder) will take, from its size."""
    size = _graph_file(path).stat().st_size
    return ImportEstimate(size, int(size * DISK_FACTOR), size / RATE_BYTES_PER_S)


def stream_import_grbench(path: str | Path, out: str | Path, name: str | None = None, *,
                          chunk_size: int = DEFAULT_CHUNK_SIZE, progress: Progress | None = None) -> Path:
    """Import a GRBench graph into ``out`` streaming; nothing is left at ``out`` if the import fails."""
    if chunk_size < 1:
        raise ValueError(f"chunk size must be a positive number of nodes, got {chunk_size}")
    file = _graph_file(path)
    check_source_outside_target(file.parent, out)
    out = Path(out)
    check_graph_target(out)
    say = progress or (lambda _message: None)
    with atomic_directory(out) as tmp:
        nodes_file = tmp / "nodes.arrow"
        hashes, type_codes, node_types = _write_nodes(file, nodes_file, chunk_size, say)
        index = IdIndex(hashes, nodes_file, str(file))
        del hashes
        spill = EdgeSpill(tmp / "edges.spill", index.num_nodes)
        relation_types, edges = _read_edges(file, index, node_types, spill, say)
        del index
        say(f"packing {spill.count:,} edges into CSR arrays")
        write_streamed_graph(tmp, type_codes, node_types, spill, relation_types,
                     {"name": name or file.parent.name, "source": f"GRBench graph {file.resolve()}",
                      **report_dropped(file, edges.dropped, edges.example)})
    return out


def iter_grbench_nodes(handle: BinaryIO, where: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(node type, node id, node object) of each node of a GRBench graph file, parsed incrementally.

    Tracks nesting depth rather than ijson prefixes: a prefix joins keys with dots, and node ids hold dots.
    """
    try:
        import ijson
    except ImportError:
        raise ImportError("the streaming GRBench import needs ijson: pip install 'ark[grbench]'") from None
    try:
        yield from _parse_nodes(ijson, handle, where)
    except ijson.JSONError as error:
        raise GraphValidationError(f"{where}: not valid JSON ({error})") from None


def _parse_nodes(ijson: Any, handle: BinaryIO, where: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    depth = 0
    table = node_id = ""
    builder: Any = None
    for _prefix, event, value in ijson.parse(handle, use_float=True):
        if builder is not None:
            builder.event(event, value)
            depth += 1 if event in ("start_map", "start_array") else -1 if event in ("end_map", "end_array") else 0
            if depth == 2:
                yield table[: -len(NODE_KEY_SUFFIX)], node_id, builder.value
                builder = None
        elif event == "map_key" and depth == 1:
            table = str(value)
            if not table.endswith(NODE_KEY_SUFFIX):
                raise GraphValidationError(f"{where}: top-level key {table!r} is not a '<type>{NODE_KEY_SUFFIX}' "
                                           "table of nodes")
        elif event == "map_key" and depth == 2:
            node_id = str(value)
        elif event == "start_map" and depth == 2:
            builder = ijson.ObjectBuilder()
            builder.event(event, value)
            depth = 3
        elif event == "start_map" and depth < 2:
            depth += 1
        elif event in ("end_map", "end_array"):
            depth -= 1
        elif depth == 2:
            raise GraphValidationError(f"{where}: node {node_id!r} of {table} is not an object")
        else:
            raise GraphValidationError(f"{where}: expected an object of '<type>{NODE_KEY_SUFFIX}' tables, "
                                       f"found {event} at depth {depth}")


def _write_nodes(file: Path, nodes_file: Path, chunk_size: int,
                 say: Progress) -> tuple[array, np.ndarray, list[str]]:
    """Pass 1: the node table, written a batch at a time; returns each node's id hash, type code and the types."""
    hashes = array("q")
    codes = array("h")
    node_types: dict[str, int] = {}
    rows: dict[str, list[str]] = {column: [] for column in NODE_SCHEMA.names}
    pending = 0
    total = file.stat().st_size
    with file.open("rb") as handle, pa.OSFile(str(nodes_file), "wb") as sink, \
            pa.ipc.new_file(sink, NODE_SCHEMA) as writer:
        for node_type, node_id, node in iter_grbench_nodes(handle, str(file)):
            features = _features(node, node_id, file)
            name_key, node_name = _node_name(features, node_id)
            hashes.append(id_index.id_hash(node_id))
            codes.append(node_types.setdefault(node_type, len(node_types)))
            rows["id"].append(node_id)
            rows["name"].append(node_name)
            rows["text"].append(node_text(node_name, {k: v for k, v in features.items() if k != name_key}))
            rows["properties"].append(json.dumps(features, ensure_ascii=False, default=str))
            pending += len(rows["text"][-1]) + len(rows["properties"][-1])
            if len(rows["id"]) >= chunk_size or pending >= CHUNK_BYTES:
                _flush(writer, rows)
                pending = 0
                say(f"nodes: {len(codes):,} read, {handle.tell() / max(total, 1):.0%} of {file.name}")
        _flush(writer, rows)
    if not codes:
        raise GraphValidationError(f"{file}: the graph has no nodes")
    return hashes, np.frombuffer(codes, dtype=np.int16), list(node_types)


def _features(node: Any, node_id: str, file: Path) -> dict[str, Any]:
    features = node.get("features")
    features = {} if features is None else features
    if not isinstance(features, dict):
        raise GraphValidationError(f"{file}: node {node_id!r}: 'features' must be an object")
    return features


def _flush(writer: Any, rows: dict[str, list[str]]) -> None:
    if rows["id"]:
        writer.write_batch(pa.record_batch([pa.array(rows[c], pa.string()) for c in NODE_SCHEMA.names],
                                           schema=NODE_SCHEMA))
        for column in rows.values():
            column.clear()


def _read_edges(file: Path, index: IdIndex, node_types: list[str], spill: EdgeSpill,
                say: Progress) -> tuple[list[str], _EdgeBuffer]:
    """Pass 2: each neighbor list resolved to node rows, ``EDGE_CHUNK`` entries at a time, into ``spill``; returns
    the relation types and the buffer (its ``dropped``: neighbors that are not nodes, and one ``example``)."""
    type_lookup = {normalize_name(t): t for t in node_types}
    edges = _EdgeBuffer(index, spill)
    with file.open("rb") as handle:
        for row, (node_type, node_id, node) in enumerate(iter_grbench_nodes(handle, str(file))):
            for neighbor_type, neighbor_ids in (node.get("neighbors") or {}).items():
                if not isinstance(neighbor_ids, list):
                    raise GraphValidationError(f"{file}: node {node_id!r}: neighbors[{neighbor_type!r}] must be a "
                                               "list of node ids")
                endpoints = _edge_types(neighbor_type, type_lookup)
                reverse = endpoints is not None and endpoints[1] == node_type and endpoints[0] != node_type
                edges.add(row, str(neighbor_type), reverse, neighbor_ids, (node_type, node_id))
            if len(edges.ids) >= EDGE_CHUNK:
                edges.flush()
                say(f"edges: {row + 1:,} of {index.num_nodes:,} nodes, {spill.count:,} edges")
    edges.flush()
    return edges.relation_types, edges


class _EdgeBuffer:
    """Neighbor lists of a run of nodes (the neighbor ids; per list its node, kind, direction and length), resolved
    to rows together (a vectorised search) and spilled when flushed. A kind becomes a relation type when its first
    edge between two nodes is spilled, so relation codes number the kinds in order of their first kept edge."""

    def __init__(self, index: IdIndex, spill: EdgeSpill) -> None:
        self.index, self.spill = index, spill
        self.ids: list[str] = []
        self.lists = array("q")  # (row, kind, reverse, length) per list, flattened
        self.kinds: dict[str, int] = {}
        self.relation_types: list[str] = []
        self.relation_of_kind = np.full(0, -1, dtype=np.int64)
        self.dropped = 0
        self.example: str | None = None  # the first dropped neighbor (see grbench.dropped_example)
        self.owners: list[tuple[str, str]] = []  # (node type, node id) per list, until the example is found

    def add(self, row: int, kind: str, reverse: bool, neighbor_ids: list[Any], owner: tuple[str, str]) -> None:
        self.ids.extend(map(str, neighbor_ids))
        self.lists.extend((row, self.kinds.setdefault(kind, len(self.kinds)), int(reverse), len(neighbor_ids)))
        if self.example is None:
            self.owners.append(owner)

    def flush(self) -> None:
        lists = np.frombuffer(self.lists, dtype=np.int64).reshape(-1, 4)
        other = self.index.rows(self.ids)
        owner, kind, reverse = (np.repeat(lists[:, k], lists[:, 3]) for k in range(3))
        found = other >= 0
        reverse = reverse.astype(bool)
        self.spill.append(np.where(reverse, other, owner)[found], np.where(reverse, owner, other)[found],
                          self._relations(kind[found]))
        self.dropped += int(len(found) - found.sum())
        if self.example is None and not found.all():
            at = int(np.argmin(found))
            number = int(np.searchsorted(np.cumsum(lists[:, 3]), at, side="right"))
            self.example = dropped_example(*self.owners[number], list(self.kinds)[int(kind[at])], self.ids[at])
        self.ids, self.lists, self.owners = [], array("q"), []

    def _relations(self, kinds: np.ndarray) -> np.ndarray:
        """Relation codes of kept edges' kinds, numbering new kinds in order of their first edge."""
        names = list(self.kinds)
        self.relation_of_kind = np.concatenate(
            (self.relation_of_kind, np.full(len(names) - len(self.relation_of_kind), -1, dtype=np.int64)))
        distinct, first = np.unique(kinds, return_index=True)
        for kind in distinct[np.argsort(first)].tolist():
            if self.relation_of_kind[kind] < 0:
                self.relation_of_kind[kind] = len(self.relation_types)
                self.relation_types.append(names[kind])
        return self.relation_of_kind[kinds]


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def elapsed_since(start: float) -> str:
    """Wall time since ``start`` (``time.perf_counter``), for a progress line."""
    return _duration(time.perf_counter() - start)
