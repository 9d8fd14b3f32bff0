"""``ark graph import`` of a graph folder (:mod:`.tabular`) in memory bounded by the build budget.

Loading the folder whole (:func:`.tabular.load_tabular`) holds the decoded node table, its documents and properties
and then the graph at once: ~11x the input tables for the synthetic MAG (docs/results/hot-paths.md). Here:

1. the node table is read a run of rows at a time (Parquet by record batches, :class:`.table_files.TableBatches`),
   each run's documents and properties made as :mod:`.table_reader` makes them, and written to ``nodes.arrow`` in
   record batches of at most :data:`BATCH_ROWS` rows and about :data:`BATCH_BYTES` bytes of text and properties;
   only each node's type code stays in memory;
2. the edge table is read the same way, its endpoints found among the node ids (read back from ``nodes.arrow``,
   only that column) and its integer edges appended to :class:`ark.graph.spilled.EdgeSpill` on disk;
3. the CSR arrays are packed from the spill (:func:`ark.graph.spilled.write_spilled_csr`) and the fingerprint taken
   from the written node file a batch at a time (:func:`write_streamed_graph`).

The graph is the one :func:`.tabular.load_tabular` builds: the same ``.npy`` arrays and ``graph.json`` byte for byte,
the same rows in ``nodes.arrow`` (the same bytes too where no 65,536-row batch exceeds :data:`BATCH_BYTES`; a bigger
one is cut there), the same errors. The sizes of the runs derive from one budget (:class:`ImportBudget`,
``$ARK_BUILD_MEMORY_MB``); the files do not depend on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ark.graph import GraphValidationError
from ark.graph.build import check_unique_ids, node_text_digest, schema_from_counts
from ark.graph.errors import describe_values
from ark.graph.ids import id_values
from ark.graph.spilled import EdgeSpill, write_spilled_csr
from ark.graph.storage import check_graph_target, write_graph_meta
from ark.graph.tables import string_column
from ark.progress import progress_bar
from ark.storage.atomic import atomic_directory
from ark.storage.memory import default_memory_budget, release_freed_memory

from .table_files import TableBatches
from .table_reader import (
    EDGE_ALIASES,
    NODE_ALIASES,
    ColumnChoice,
    TypeColumns,
    batch_documents,
    check_text_columns,
    key_columns,
    raise_bad_properties,
    raise_blank,
    stripped_key,
)

BATCH_ROWS = 65_536  # rows of a record batch of nodes.arrow, as save_graph writes them
BATCH_BYTES = 8_000_000  # and a batch is cut once its text and properties reach this many bytes
NODE_SCHEMA = pa.schema([("id", pa.string()), ("name", pa.string()), ("text", pa.string()),
                         ("properties", pa.string())])
# Working memory per byte of a node run as Arrow data (its columns as Python objects, the parsed properties, the
# documents and their Arrow arrays), and per edge of an edge run (three text columns, their lookups, int64 arrays);
# measured on the synthetic MAG, rounded up.
BYTES_PER_NODE_BYTE = 12
BYTES_PER_EDGE = 200
MAX_NODE_RUN_BYTES = 4_000_000  # past this a bigger run is no faster (the Python work per row dominates)
MAX_EDGE_RUN = 1 << 18
BYTES_PER_SPILLED_EDGE = 80  # an edge read back from the spill: its two int64 keys, their buckets and order
BYTES_PER_BUCKET_ENTRY = 40  # a CSR entry of a bucket being sorted and split into neighbors and codes
MAX_SPILL_CHUNK = 1 << 17  # past these the pack is no faster (numpy on arrays of ~1M values)
MAX_BUCKET_ENTRIES = 1 << 18


@dataclass(frozen=True)
class ImportBudget:
    """The runs of an import within ``memory_budget`` bytes of working memory (the phases follow each other)."""

    memory_budget: int
    node_run_bytes: int  # bytes of node table (as Arrow data) made into documents at a time
    edge_run: int  # edges read and resolved at a time
    spill_chunk: int  # spilled edges read back at a time when packing the CSR arrays
    bucket_entries: int  # CSR entries sorted at a time

    @classmethod
    def of(cls, memory_budget: int | None = None) -> ImportBudget:
        """The runs within ``memory_budget`` bytes (default ``$ARK_BUILD_MEMORY_MB``), each capped where a bigger
        run is no faster, so the default budget's import stays well inside it."""
        budget = default_memory_budget() if memory_budget is None else memory_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 2**20:
            raise ValueError(f"memory_budget must be a number of bytes of at least 1 MiB (2**20), got {budget!r}")
        return cls(budget, max(min(MAX_NODE_RUN_BYTES, budget // BYTES_PER_NODE_BYTE), 4096),
                   max(min(MAX_EDGE_RUN, budget // BYTES_PER_EDGE), 1024),
                   max(min(MAX_SPILL_CHUNK, budget // BYTES_PER_SPILLED_EDGE), 1024),
                   max(min(MAX_BUCKET_ENTRIES, budget // BYTES_PER_BUCKET_ENTRY), 1024))


@dataclass
class _Nodes:
    """What the node pass keeps: each node's type code, the types in order of first appearance, each type's
    columns, and the errors found (raised once the pass is over, in the order the whole-table read raises them)."""

    codes: list[np.ndarray] = field(default_factory=list)
    node_types: dict[str, int] = field(default_factory=dict)
    by_type: dict[str, TypeColumns] = field(default_factory=dict)
    blank: dict[str, list[int]] = field(default_factory=lambda: {"id": [], "type": []})
    bad: list[str] = field(default_factory=list)
    rows: int = 0


def stream_import(folder: Path, fmt: str | None, out: Path, metadata: dict[str, Any], title: str,
                  columns: ColumnChoice = ColumnChoice(), report: Callable[[TypeColumns], None] | None = None,
                  memory_budget: int | None = None) -> Path:
    """Import the node and edge tables of ``folder`` (``fmt``'s first, :func:`.tabular.find_table`) into graph
    directory ``out`` (see the module doc); nothing is left at ``out`` if it fails. ``title`` names the graph on
    the bar of steps."""
    from .tabular import find_table  # tabular imports this module when it imports
    budget = ImportBudget.of(memory_budget)
    check_graph_target(out)
    nodes_file = find_table(folder, "nodes", fmt)
    with atomic_directory(out) as tmp:
        nodes = _write_nodes(nodes_file, tmp / "nodes.arrow", columns, budget)
        for entry in nodes.by_type.values():
            if report is not None:
                report(entry)
        with progress_bar(f"Building graph {title!r} (edges, graph, files)", 3) as bar:
            edges_file = find_table(folder, "edges", fmt)
            spill = EdgeSpill(tmp / "edges.spill", nodes.rows)
            try:
                relation_types = _spill_edges(edges_file, tmp / "nodes.arrow", str(nodes_file), spill, budget)
            finally:
                spill.close()
            bar.advance(1)
            type_codes = np.concatenate(nodes.codes) if nodes.codes else np.empty(0, np.int16)
            write_streamed_graph(tmp, type_codes, list(nodes.node_types), spill, relation_types, metadata,
                                 budget.spill_chunk, budget.bucket_entries)
            bar.advance(2)
    return out


def _write_nodes(path: Path, target: Path, choice: ColumnChoice, budget: ImportBudget) -> _Nodes:
    """Pass 1: the node table read a run at a time into ``target``'s record batches."""
    source = TableBatches(path)
    keys = key_columns(path, source.columns, {"id": choice.id, "type": choice.type, "name": choice.name},
                       NODE_ALIASES, optional=("name",))
    extra = [c for c in source.columns if c not in keys.values() and c != "properties"]
    source.type_cells(extra)
    nodes = _Nodes()
    with pa.OSFile(str(target), "wb") as sink, pa.ipc.new_file(sink, NODE_SCHEMA) as writer, \
            progress_bar(f"Reading {path.name}", source.num_rows) as bar:
        batches = _BatchCutter(writer)
        for start, columns in source.batches(budget.node_run_bytes, BATCH_ROWS):
            ids = stripped_key(path, columns, keys["id"], start, nodes.blank["id"])
            types = stripped_key(path, columns, keys["type"], start, nodes.blank["type"])
            names = string_column(columns[keys["name"]], "") if "name" in keys else ids
            texts, stored = batch_documents(columns, names, types, extra, choice.text, start, nodes.bad, nodes.by_type)
            nodes.codes.append(_codes(types, nodes.node_types))
            batches.add([_array(ids), _array(names), texts, _array(stored)])
            nodes.rows += len(texts)
            bar.advance(len(texts))
            del columns, ids, types, names, texts, stored
            release_freed_memory()
        batches.flush()
    for role in ("id", "type"):
        raise_blank(path, keys[role], nodes.blank[role])
    if choice.text is not None:
        check_text_columns(path, choice.text, extra, "properties" in source.columns)
    raise_bad_properties(path, nodes.bad)
    for report in nodes.by_type.values():
        report.name = keys.get("name", keys["id"])
    return nodes


class _BatchCutter:
    """Rows appended in runs, written as record batches of :data:`BATCH_ROWS` rows, or fewer once their text and
    properties reach :data:`BATCH_BYTES` bytes (the batch ends with the row that reaches it)."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer
        self.parts: list[list[pa.Array]] = []
        self.rows = self.bytes = 0

    def add(self, columns: list[pa.Array]) -> None:
        sizes = (pc.binary_length(columns[2]).to_numpy(zero_copy_only=False).astype(np.int64)
                 + pc.binary_length(columns[3]).to_numpy(zero_copy_only=False).astype(np.int64))
        begin, n = 0, len(sizes)
        while begin < n:
            room = min(BATCH_ROWS - self.rows, n - begin)
            reached = np.cumsum(sizes[begin : begin + room]) + self.bytes
            over = np.flatnonzero(reached >= BATCH_BYTES)
            take = int(over[0]) + 1 if len(over) else room
            self.parts.append([c.slice(begin, take) for c in columns])
            self.rows += take
            self.bytes = int(reached[take - 1])
            begin += take
            if self.rows >= BATCH_ROWS or self.bytes >= BATCH_BYTES:
                self.flush()

    def flush(self) -> None:
        if self.rows:
            arrays = [pa.concat_arrays([part[k] for part in self.parts]) for k in range(len(NODE_SCHEMA))]
            self.parts = []
            self.writer.write_batch(pa.record_batch(arrays, schema=NODE_SCHEMA))
        self.rows = self.bytes = 0


def _array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    return values


def _codes(values: pa.Array | pa.ChunkedArray, known: dict[str, int]) -> np.ndarray:
    """Codes of text values, numbering new ones in order of first appearance after those ``known``."""
    encoded = pc.dictionary_encode(_array(values))
    names = encoded.dictionary.to_pylist()
    mapping = np.array([known.setdefault(name, len(known)) for name in names], dtype=np.int16)
    return mapping[encoded.indices.to_numpy(zero_copy_only=False)] if len(names) else np.empty(0, np.int16)


def _spill_edges(path: Path, nodes_file: Path, nodes_source: str, spill: EdgeSpill,
                 budget: ImportBudget) -> list[str]:
    """Pass 2: the edge table read a run at a time, its endpoints found among the node ids, into ``spill``;
    returns the relation types in order of first appearance. Raises the errors of the whole-table build, in its
    order: blank key cells, no nodes, duplicate node ids, unknown endpoints."""
    source = TableBatches(path)
    keys = key_columns(path, source.columns, {}, EDGE_ALIASES, flags=False)
    ids = _node_ids(nodes_file)
    blank: dict[str, list[int]] = {role: [] for role in keys}
    unknown: dict[str, list[str]] = {"from": [], "to": []}
    relations: dict[str, int] = {}
    for start, columns in source.batches(budget.edge_run * 64, budget.edge_run):
        values = {role: stripped_key(path, columns, column, start, blank[role]) for role, column in keys.items()}
        del columns
        if any(blank.values()):
            continue  # an error once the pass is over: nothing more to resolve
        src, dst = _endpoints(values["from"], values["to"], ids, str(path), start, unknown)
        if not any(unknown.values()):
            spill.append(src, dst, _codes(string_column(values["type"], "None"), relations))
        del values, src, dst
        release_freed_memory()
    for role, column in keys.items():
        raise_blank(path, column, blank[role])
    if not len(ids):
        raise GraphValidationError(f"{nodes_source}: the graph has no nodes")
    check_unique_ids(ids, nodes_source)
    for role, found in unknown.items():
        if found:
            raise GraphValidationError(f"{path}: column {role!r} points at unknown node ids in "
                                       + describe_values(found, len(found)))
    return list(relations)


def _node_ids(nodes_file: Path) -> pa.Array:
    """The id column of the node file written (only its pages read)."""
    chunks = list(column_chunks(nodes_file, "id"))
    return pa.concat_arrays(chunks) if chunks else pa.array([], pa.string())


def column_chunks(nodes_file: Path, column: str) -> Iterator[pa.Array]:
    """One column of a node file, a record batch at a time, each batch memory-mapped on its own: only that
    column's pages are read, and they leave the process's memory with the batch (a reader of the whole file would
    hold every page it touched until the last batch)."""
    with pa.memory_map(str(nodes_file)) as source:
        count = pa.ipc.open_file(source).num_record_batches
    for i in range(count):
        with pa.memory_map(str(nodes_file)) as source:  # the batch's buffers keep their mapping alive
            chunk = pa.ipc.open_file(source).get_batch(i).column(column)
        yield chunk
        del chunk


def _endpoints(sources: pa.Array | pa.ChunkedArray, targets: pa.Array | pa.ChunkedArray, ids: pa.Array, where: str,
               start: int, unknown: dict[str, list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """The node rows of a run's sources and targets (one lookup: it hashes the ids again each call); endpoints that
    are no node's id noted in ``unknown[role]`` as ``row R: ID``."""
    text = [string_column(id_values(values, f"{where}: {role}"), "None")
            for values, role in ((sources, "from"), (targets, "to"))]
    both = pa.chunked_array([c for t in text for c in (t.chunks if isinstance(t, pa.ChunkedArray) else [t])],
                            pa.string())
    index = pc.index_in(both, value_set=ids)
    rows = pc.fill_null(index, -1).to_numpy().astype(np.int64)
    if index.null_count:
        for k, (values, role) in enumerate(((text[0], "from"), (text[1], "to"))):
            part = rows[k * len(text[0]) : k * len(text[0]) + len(values)]
            missing = np.flatnonzero(part < 0)
            found = values.take(pa.array(missing)).to_pylist() if len(missing) else []
            unknown[role] += [f"row {r + start}: {u}" for r, u in zip(missing.tolist(), found, strict=True)]
    return rows[: len(text[0])], rows[len(text[0]) :]


def write_streamed_graph(folder: Path, type_codes: np.ndarray, node_types: list[str], spill: EdgeSpill,
                         relation_types: list[str], metadata: dict[str, Any], spill_chunk: int | None = None,
                         bucket_entries: int | None = None) -> None:
    """Everything of a graph directory but ``nodes.arrow`` (written already), ``graph.json`` last: the CSR arrays
    packed from ``spill`` (``spill_chunk`` edges and ``bucket_entries`` entries at a time), the fingerprint taken
    from ``nodes.arrow`` a record batch at a time."""
    def column_batches(column: str) -> Iterator[pa.Array]:
        return column_chunks(folder / "nodes.arrow", column)

    digest = node_text_digest(column_batches)
    num_edges, counts = write_spilled_csr(spill, folder, type_codes, len(node_types), len(relation_types), digest,
                                          spill_chunk=spill_chunk, bucket_entries=bucket_entries)
    np.save(folder / "node_type_codes.npy", np.asarray(type_codes, dtype=np.int16))
    metadata = {**metadata, "fingerprint": digest.hexdigest()}
    write_graph_meta(folder, len(type_codes), num_edges, node_types, relation_types,
                     schema_from_counts(counts, node_types, relation_types), metadata)
