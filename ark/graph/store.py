"""The in-memory knowledge graph: node table plus CSR adjacency over both edge directions.

Each node's CSR row lists every incident edge once from its own side: an edge ``u -r-> v`` appears in row ``u`` as
``(v, r, outgoing)`` and in row ``v`` as ``(u, r, incoming)``. Entries are packed as ``code = 2 * r + incoming``
(int16) beside the neighbor (int32): 12 bytes per stored edge. Rows are sorted by (code, neighbor), so every typed
lookup is a slice found by binary search.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow as pa

from ..arrays import I32, I64, Bools, Ints
from ..text import did_you_mean
from .info import GraphInfo
from .keys import KeyTable, column_chunks

if TYPE_CHECKING:
    from pydantic import JsonValue

Direction = Literal["both", "out", "in"]
DIRECTIONS: tuple[str, ...] = ("both", "out", "in")


@dataclass(frozen=True)
class SchemaTriple:
    """One (source type, relation, target type) combination that occurs, with its edge count."""

    source_type: str
    relation: str
    target_type: str
    count: int


@dataclass(frozen=True)
class Neighbors:
    """Neighbors of one node: parallel arrays, ordered by (relation, direction, neighbor)."""

    nodes: Ints
    relations: Ints
    outgoing: Bools

    def __len__(self) -> int:
        return len(self.nodes)


def normalize_name(name: str) -> str:
    """Case- and separator-insensitive form used to match type and relation names."""
    return " ".join(str(name).lower().replace("_", " ").replace("-", " ").split())


class KnowledgeGraph:
    """A typed, text-rich, directed multigraph held in arrays. Build with :func:`ark.graph.build_graph`; open and
    save with :func:`ark.graph.load_graph` and :func:`ark.graph.save_graph`."""

    def __init__(
        self,
        nodes: pa.Table,
        node_type_codes: Ints,
        node_types: list[str],
        relation_types: list[str],
        indptr: Ints,
        neighbors: Ints,
        codes: Ints,
        schema: list[SchemaTriple],
        metadata: Mapping[str, object] | None = None,
        path: Path | None = None,
    ) -> None:
        self.nodes = nodes
        self.node_type_codes = node_type_codes
        self.node_types = list(node_types)
        self.relation_types = list(relation_types)
        self.indptr = indptr
        self.neighbor_array = neighbors
        self.code_array = codes
        self.schema = list(schema)
        self.metadata: dict[str, object] = dict(metadata or {})
        self.path = path

    @property
    def info(self) -> GraphInfo:
        """The graph's identity (name, fingerprint, version, credit, descriptions) as a typed record."""
        return GraphInfo.from_metadata(self.metadata)

    # ----------------------------------------------------------------- sizes
    @property
    def num_nodes(self) -> int:
        return len(self.node_type_codes)

    @property
    def num_edges(self) -> int:
        """Number of directed edges (each is stored twice in the CSR, once per endpoint)."""
        return len(self.neighbor_array) // 2

    def folder(self) -> Path:
        """The directory the graph was opened from or saved to; ``ValueError`` for a graph built in memory only."""
        if self.path is None:
            raise ValueError(f"graph {self.info.label()!r} has no folder: it was built in memory and never saved")
        return self.path

    def __repr__(self) -> str:
        name = self.info.label()
        return f"KnowledgeGraph({name!r}, nodes={self.num_nodes:,}, edges={self.num_edges:,})"

    # ----------------------------------------------------------------- nodes
    # Ids and names are read from the memory-mapped node table, never copied into Python lists, and ids are found
    # through a table of their hashes (:mod:`.keys`, ~12 bytes a node): at GRBench Amazon's size a list of every id
    # and every name and a dict of the ids took ~2.4 GB in each process that opened the graph.
    @cached_property
    def _id_column(self) -> pa.Array | pa.ChunkedArray:
        return _unchunked(self.nodes.column("id"))

    @cached_property
    def _name_column(self) -> pa.Array | pa.ChunkedArray:
        return _unchunked(self.nodes.column("name"))

    @cached_property
    def _texts(self) -> pa.Array | pa.ChunkedArray:
        return _unchunked(self.nodes.column("text"))

    @cached_property
    def _properties(self) -> pa.Array | pa.ChunkedArray:
        return _unchunked(self.nodes.column("properties"))

    @cached_property
    def _id_table(self) -> KeyTable:
        return KeyTable.build(column_chunks(self.nodes.column("id")))

    def node_id(self, i: int) -> str:
        return self._id_column[i].as_py()

    def name(self, i: int) -> str:
        return self._name_column[i].as_py()

    def text(self, i: int) -> str:
        """The node's document: the text that search ranks."""
        return self._texts[i].as_py()

    def rows(self, nodes: list[int]) -> tuple[list[str], list[str], list[str]]:
        """The names, types and texts of ``nodes`` (a tool call's hits) read in one pass over the columns' buffers:
        ``name(i)`` per node makes an Arrow scalar each (60 a search call, ~70 us of it on HPO)."""
        codes, types = np.asarray(self.node_type_codes)[nodes].tolist(), self.node_types
        names, texts = self._string_views
        return (_strings(names, nodes, self.name), [types[c] for c in codes], _strings(texts, nodes, self.text))

    @cached_property
    def _string_views(self) -> tuple[StringViews | None, StringViews | None]:
        """The name and text columns' offsets and bytes as :func:`_strings` reads them, made once (each call's
        buffer objects and views cost ~5 us, more with the caches cold)."""
        return _string_views(self._name_column), _string_views(self._texts)

    def properties(self, i: int) -> dict[str, JsonValue]:
        return json.loads(self._properties[i].as_py() or "{}")

    def node_type(self, i: int) -> str:
        return self.node_types[int(self.node_type_codes[i])]

    def _row_of(self, node_id: str) -> int:
        """The index of ``node_id``, -1 when no node has it."""
        rows = self._id_table.rows(node_id, self.node_id)
        return rows[0] if rows else -1

    def has_node(self, node_id: str) -> bool:
        return self._row_of(node_id) >= 0

    def index_of(self, node_id: str) -> int:
        """Internal index of a source id such as ``HP:0001250``; ``KeyError`` naming the id if unknown."""
        row = self._row_of(node_id)
        if row < 0:
            raise KeyError(f"unknown node id {node_id!r} in graph {self.info.name or ''!r}")
        return row

    def is_valid_index(self, i: int) -> bool:
        return 0 <= i < self.num_nodes

    def nodes_of_type(self, node_type: str) -> I32:
        return np.flatnonzero(self.type_mask(node_type)).astype(np.int32)

    def type_mask(self, node_types: str | Sequence[str]) -> Bools:
        """Bool mask over nodes whose type is one of ``node_types`` (names resolved case-insensitively; an
        unknown name raises ``ValueError`` listing the valid ones)."""
        names = [node_types] if isinstance(node_types, str) else list(node_types)
        codes = [self.node_types.index(self.resolve_node_type(name)) for name in names]
        return np.isin(self.node_type_codes, np.asarray(codes, dtype=self.node_type_codes.dtype))

    def type_counts(self) -> dict[str, int]:
        counts = np.bincount(self.node_type_codes, minlength=len(self.node_types))
        return {name: int(c) for name, c in zip(self.node_types, counts, strict=True)}

    # ----------------------------------------------------------------- names
    @cached_property
    def _type_lookup(self) -> dict[str, str]:
        return {normalize_name(t): t for t in self.node_types}

    @cached_property
    def _relation_lookup(self) -> dict[str, str]:
        return {normalize_name(r): r for r in self.relation_types}

    def resolve_node_type(self, name: str) -> str:
        """Canonical node type for ``name`` (case/separator-insensitive); ``ValueError`` lists valid types."""
        return _resolve(name, self._type_lookup, self.node_types, "node type")

    def resolve_relation(self, name: str) -> str:
        """Canonical relation for ``name`` (case/separator-insensitive); ``ValueError`` lists valid relations."""
        return _resolve(name, self._relation_lookup, self.relation_types, "relation")

    def relation_code(self, name: str) -> int:
        return self.relation_types.index(self.resolve_relation(name))

    # ----------------------------------------------------------------- edges
    def degree(self, i: int) -> int:
        return int(self.indptr[i + 1] - self.indptr[i])

    def neighbors(self, i: int, relation: str | int | None = None, direction: Direction = "both") -> Neighbors:
        """One-hop neighbors of node ``i``, optionally of one relation and one direction (a slice of the row)."""
        if direction not in DIRECTIONS:
            raise ValueError(f"unknown direction {direction!r}; valid: {', '.join(DIRECTIONS)}")
        start, end = int(self.indptr[i]), int(self.indptr[i + 1])
        if relation is not None:
            code = relation if isinstance(relation, int | np.integer) else self.relation_code(relation)
            low = 2 * int(code) + (1 if direction == "in" else 0)
            high = 2 * int(code) + (1 if direction == "out" else 2)
            row = self.code_array[start:end]
            start, end = start + int(np.searchsorted(row, low)), start + int(np.searchsorted(row, high))
            return self._slice(start, end)
        found = self._slice(start, end)
        if direction == "both":
            return found
        keep = found.outgoing if direction == "out" else ~found.outgoing
        return Neighbors(found.nodes[keep], found.relations[keep], found.outgoing[keep])

    def _slice(self, start: int, end: int) -> Neighbors:
        codes = self.code_array[start:end]
        return Neighbors(self.neighbor_array[start:end], codes >> 1, (codes & 1) == 0)

    def edges(self) -> tuple[I32, Ints, Ints]:
        """The stored directed edges as (source, target, relation code) arrays."""
        outgoing = (self.code_array & 1) == 0
        rows = np.repeat(np.arange(self.num_nodes, dtype=np.int32), np.diff(self.indptr))
        return rows[outgoing], np.asarray(self.neighbor_array[outgoing]), self.code_array[outgoing] >> 1

    def relation_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(self.relation_types, 0)
        for triple in self.schema:
            counts[triple.relation] += triple.count
        return counts


def _unchunked(column: pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """The column's one chunk, or the chunked column itself: never a copy (a memory-mapped text column of gigabytes
    stays in the page cache; ``ChunkedArray[i]`` finds the chunk by binary search)."""
    return column.chunk(0) if column.num_chunks == 1 else column


StringViews = tuple[I32 | I64, memoryview]  # a string column's offsets (its slice offset applied) and bytes


def _string_views(column: pa.Array | pa.ChunkedArray) -> StringViews | None:
    """A string column's offsets, from its first row, and data bytes: where it is one chunk without nulls (None
    otherwise: read value by value)."""
    if not isinstance(column, pa.StringArray | pa.LargeStringArray) or column.null_count:
        return None
    _, offsets_buffer, data_buffer = column.buffers()
    rows = slice(column.offset, column.offset + len(column) + 1)
    data = memoryview(data_buffer or b"")
    if isinstance(column, pa.StringArray):
        return np.frombuffer(offsets_buffer, dtype=np.int32)[rows], data
    return np.frombuffer(offsets_buffer, dtype=np.int64)[rows], data


def _strings(views: StringViews | None, nodes: list[int], read: Callable[[int], str]) -> list[str]:
    """``[read(i) for i in nodes]`` for a string column, sliced from its offsets and data bytes (``views``) where
    it has them (the same strings, decoded the same way)."""
    if views is None or not nodes:
        return [read(i) for i in nodes]
    offsets, data = views
    at = np.asarray(nodes, dtype=np.int64)
    return [str(data[start:stop], "utf-8") for start, stop in zip(offsets[at].tolist(), offsets[at + 1].tolist(),
                                                                     strict=True)]


def _resolve(name: str, lookup: dict[str, str], valid: list[str], what: str) -> str:
    found = lookup.get(normalize_name(name))
    if found is None:
        raise ValueError(f"unknown {what} {name!r}{did_you_mean(name, valid)}; valid: {', '.join(valid)}")
    return found
