"""The Cypher export in bounded memory: a graph's nodes and edges read chunk by chunk from its memory-mapped arrays
(``nodes.arrow``, the CSR ``.npy`` files) and written as Parquet parts of bounded size, each loaded by its own
``COPY ... FROM`` (the engine appends to a table that already holds rows).

What the export holds at once is one chunk (its rows' id strings, texts and property dicts, the Parquet writer's
buffers) plus the engine's buffer pool, bounded too (:attr:`ExportChunks.buffer_pool_mb`): the engine keeps about
60 bytes an edge of the rows one ``COPY`` loads in that pool, and a ``COPY`` the pool cannot hold fails, so the pool
is sized for one chunk. Rows arrive in the order of a whole export (nodes by index within their type, edges in the
CSR's order), so the database holds the same nodes, properties, ``idx`` values and edges.
"""

from __future__ import annotations

import ctypes
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .schema import CypherSchema, PropertyColumn, PropertyScan

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

SCAN_ROWS = 1 << 20  # nodes or CSR entries read from the memory-mapped arrays at a time
_MADV_DONTNEED = 4  # Linux


@dataclass(frozen=True)
class ExportChunks:
    """How much one ``COPY`` loads: node rows of about ``node_bytes`` bytes (ids, names, texts, properties as
    stored), ``edge_rows`` edges; ``buffer_pool_mb`` is the engine's page pool while it loads them (it must hold
    one edge chunk, ~60 bytes an edge, and the primary-key index pages a chunk touches); ``scan_rows`` nodes or
    CSR entries are read from the graph's arrays at a time."""

    node_bytes: int = 64 * 2**20
    edge_rows: int = 4_000_000
    buffer_pool_mb: int = 1024
    scan_rows: int = SCAN_ROWS

    def __post_init__(self) -> None:
        for name in ("node_bytes", "edge_rows", "buffer_pool_mb", "scan_rows"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)!r}")

    def node_rows(self, graph: KnowledgeGraph) -> int:
        """Node rows per chunk: ``node_bytes`` over the average stored size of a node's row."""
        per_row = graph.nodes.nbytes / max(graph.num_nodes, 1)
        return max(1, int(self.node_bytes // max(per_row, 1.0)))


def release_pages(graph: KnowledgeGraph) -> None:
    """Drop from this process's resident memory the pages of the graph's memory-mapped files (read-only
    mappings of files under its folder) that the export has read: they stay in the page cache, and a later read maps
    them again, so what the export holds does not grow with the files it reads. Linux only; elsewhere, or for a
    graph without a folder, nothing."""
    folder = getattr(graph, "path", None)
    if folder is None or not sys.platform.startswith("linux"):
        return
    root = str(Path(folder).resolve()) + "/"
    try:
        lines = Path("/proc/self/maps").read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[1] in ("r--s", "r--p") and fields[5].startswith(root):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), _MADV_DONTNEED)


def take_rows(column: pa.Array | pa.ChunkedArray, indices: np.ndarray) -> pa.Array:
    """``column[indices]``, gathered chunk by chunk: pyarrow's ``ChunkedArray.take`` first concatenates the whole
    column (a copy of a memory-mapped column of gigabytes for every chunk the export reads)."""
    indices = np.asarray(indices, dtype=np.int64)
    if isinstance(column, pa.Array):
        return column.take(pa.array(indices))
    offsets = np.cumsum([0, *(len(chunk) for chunk in column.chunks)])
    which = np.searchsorted(offsets, indices, side="right") - 1
    order = np.argsort(which, kind="stable")
    bounds = np.searchsorted(which[order], np.arange(column.num_chunks + 1))
    pieces = [column.chunk(k).take(pa.array(indices[order[bounds[k]:bounds[k + 1]]] - offsets[k]))
              for k in range(column.num_chunks) if bounds[k] < bounds[k + 1]]
    gathered = pa.concat_arrays(pieces) if pieces else pa.array([], column.type)
    if np.array_equal(order, np.arange(len(order))):
        return gathered
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    return gathered.take(pa.array(inverse))


def scan_property_columns(graph: KnowledgeGraph, window: int | None = None) -> dict[str, tuple[PropertyColumn, ...]]:
    """Node type -> its property columns, found by reading the nodes' property texts ``window`` at a time (default:
    a node chunk of :class:`ExportChunks`); empty when no node has properties (the same columns
    :func:`~ark.graphdb.schema.build_schema` finds from every node's property dict)."""
    window = window or ExportChunks().node_rows(graph)
    if "properties" not in graph.nodes.column_names:
        return {}
    column = graph.nodes.column("properties")
    if pc.all(pc.equal(column, "{}")).as_py() in (True, None):
        return {}
    scans = [PropertyScan() for _ in graph.node_types]
    codes = graph.node_type_codes
    for start in range(0, graph.num_nodes, window):
        texts = column.slice(start, window).to_pylist()
        for text, code in zip(texts, np.asarray(codes[start:start + window]).tolist(), strict=True):
            if text and text != "{}":
                scans[code].add(json.loads(text))
        release_pages(graph)
    return {node_type: scan.columns() for node_type, scan in zip(graph.node_types, scans, strict=True)}


def node_index_chunks(graph: KnowledgeGraph, node_type: str, rows: int,
                      window: int = SCAN_ROWS) -> Iterator[np.ndarray]:
    """The indices of ``node_type``'s nodes in increasing order, ``rows`` at a time (the type codes read
    ``window`` at a time)."""
    code = graph.node_types.index(node_type)
    codes = graph.node_type_codes
    pending: list[np.ndarray] = []
    held = 0
    for start in range(0, len(codes), window):
        found = np.flatnonzero(np.asarray(codes[start:start + window]) == code).astype(np.int64) + start
        if found.size:
            pending.append(found)
            held += found.size
        while held >= rows:
            joined = np.concatenate(pending)
            yield joined[:rows]
            pending, held = [joined[rows:]], held - rows
    if held:
        yield np.concatenate(pending)


def edge_chunks(graph: KnowledgeGraph, entries: int = SCAN_ROWS) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The stored directed edges as (source, target, relation code) arrays, from ``entries`` CSR entries at a time:
    together, :meth:`~ark.graph.KnowledgeGraph.edges` in its order."""
    indptr = graph.indptr
    total = int(indptr[-1]) if len(indptr) else 0
    for start in range(0, total, entries):
        end = min(total, start + entries)
        first = int(np.searchsorted(indptr, start, side="right")) - 1
        last = int(np.searchsorted(indptr, end - 1, side="right")) - 1
        bounds = np.clip(np.asarray(indptr[first:last + 2], dtype=np.int64), start, end)
        rows = np.repeat(np.arange(first, last + 1, dtype=np.int64), np.diff(bounds))
        codes = np.asarray(graph.code_array[start:end])
        outgoing = (codes & 1) == 0
        yield rows[outgoing], np.asarray(graph.neighbor_array[start:end])[outgoing].astype(np.int64), \
            (codes[outgoing] >> 1).astype(np.int64)


class PartWriter:
    """Parquet files of at most ``rows`` rows each (``<stem>-<n>.parquet`` in ``folder``), written a row group at a
    time as tables arrive; :meth:`write` and :meth:`close` return the files completed."""

    def __init__(self, folder: Path, stem: str, rows: int, schema: pa.Schema) -> None:
        self.folder, self.stem, self.rows, self.schema = folder, stem, rows, schema
        self._writer: pq.ParquetWriter | None = None
        self._path: Path | None = None
        self._held = 0
        self._parts = 0

    def write(self, table: pa.Table) -> list[Path]:
        done: list[Path] = []
        while table.num_rows:
            if self._writer is None:
                self._path = self.folder / f"{self.stem}-{self._parts}.parquet"
                self._parts += 1
                self._writer = pq.ParquetWriter(self._path, self.schema)
            piece = table.slice(0, self.rows - self._held)
            self._writer.write_table(piece)
            self._held += piece.num_rows
            table = table.slice(piece.num_rows)
            if self._held >= self.rows:
                done += self.close()
        return done

    def close(self) -> list[Path]:
        if self._writer is None or self._path is None:
            return []
        self._writer.close()
        path, self._writer, self._path, self._held = self._path, None, None, 0
        return [path]


def edge_parts(graph: KnowledgeGraph, schema: CypherSchema, folder: Path, rows: int,
               entries: int = SCAN_ROWS) -> Iterator[tuple[tuple[str, str, str], Path]]:
    """((rel label, from label, to label), Parquet file of at most ``rows`` (from id, to id) rows) for every edge of
    ``graph``, one pass over its CSR: each file as soon as it is complete (so it can be loaded and removed), the
    tables' last parts at the end."""
    types = len(graph.node_types)
    writers: dict[int, PartWriter] = {}
    keys: dict[int, tuple[str, str, str]] = {}
    for spec in schema.rels:
        r = graph.relation_types.index(spec.relation)
        for pair in spec.pairs:
            s = graph.node_types.index(_type_of(schema, pair.source))
            t = graph.node_types.index(_type_of(schema, pair.target))
            key = (r * types + s) * types + t
            keys[key] = (spec.label, pair.source, pair.target)
            writers[key] = PartWriter(folder, f"edges-{len(writers)}", rows,
                                      pa.schema([("from", pa.string()), ("to", pa.string())]))
    ids = graph.nodes.column("id")
    codes = graph.node_type_codes
    scanned = 0
    for src, dst, rel in edge_chunks(graph, entries):
        scanned += len(src)
        if scanned >= rows:  # the CSR and id pages read since the last release
            release_pages(graph)
            scanned = 0
        combined = (rel * types + np.asarray(codes[src], dtype=np.int64)) * types + np.asarray(codes[dst], np.int64)
        order = np.argsort(combined, kind="stable")
        present, starts = np.unique(combined[order], return_index=True)
        bounds = [*starts.tolist(), len(order)]
        for key, lo, hi in zip(present.tolist(), bounds[:-1], bounds[1:], strict=True):
            if key not in writers:
                raise ValueError(f"an edge of relation {graph.relation_types[key // types // types]!r} between "
                                 "node types the graph's schema does not list: the graph's files disagree")
            chosen = order[lo:hi]
            table = pa.table({"from": take_rows(ids, src[chosen]), "to": take_rows(ids, dst[chosen])})
            for path in writers[key].write(table):
                yield keys[key], path
    for key, writer in writers.items():
        for path in writer.close():
            yield keys[key], path


def _type_of(schema: CypherSchema, label: str) -> str:
    spec = schema.node_table(label)
    if spec is None:
        raise KeyError(f"no node table {label!r} in the schema")
    return spec.node_type
