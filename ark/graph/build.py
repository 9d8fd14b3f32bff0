"""Validate node/edge tables and pack them into a :class:`KnowledgeGraph`."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ..arrays import I16, I32, I64, sorted_unique
from .errors import GraphValidationError, describe_values
from .ids import id_values
from .store import KnowledgeGraph, SchemaTriple
from .tables import EdgeTable, NodeTable, string_column

FINGERPRINT_COLUMNS = ("id", "name", "text")
# The largest text a string array's 32-bit offsets can address; a longer column hashes 64-bit offsets.
OFFSET32_LIMIT = 2**31 - 1


def build_graph(nodes: NodeTable, edges: EdgeTable, metadata: Mapping[str, object] | None = None) -> KnowledgeGraph:
    """Build a graph from string-keyed tables, rejecting duplicate ids, unknown endpoints and unknown relations."""
    table = nodes.to_arrow()
    if table.num_rows == 0:
        raise GraphValidationError(f"{nodes.source}: the graph has no nodes")
    check_unique_ids(table.column("id"), nodes.source)
    _check_non_empty("type", table.column("type"), nodes.source)

    node_types, type_codes = _encode(table.column("type"))
    relation_names = string_column(edges.relations, "None")
    if edges.allowed_relations is not None:
        unknown = pc.filter(relation_names, pc.invert(pc.is_in(relation_names, pa.array(edges.allowed_relations))))
        if len(unknown):
            raise GraphValidationError(
                f"{edges.source}: unknown relation name(s) in "
                + describe_values(sorted(set(unknown.to_pylist())), len(unknown))
                + f"; valid: {', '.join(edges.allowed_relations)}"
            )
    _check_non_empty("type", relation_names, edges.source)
    relation_types, relation_codes = _encode(relation_names)
    src = _endpoint_indices(edges.sources, table.column("id"), edges.source, "from")
    dst = _endpoint_indices(edges.targets, table.column("id"), edges.source, "to")
    return build_graph_from_arrays(
        table, type_codes, node_types, src, dst, relation_codes, relation_types, metadata=metadata
    )


def build_graph_from_arrays(
    nodes: pa.Table,
    node_type_codes: npt.ArrayLike,
    node_types: list[str],
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    relations: npt.ArrayLike,
    relation_types: list[str],
    metadata: Mapping[str, object] | None = None,
    text_digest: hashlib.blake2b | None = None,
) -> KnowledgeGraph:
    """Pack integer edge arrays into the CSR store. Duplicate (source, target, relation) edges are kept once.

    ``text_digest``: a blake2b already fed the node columns (:func:`node_text_digest`), so a streaming import need
    not page its whole memory-mapped node table back in to fingerprint it."""
    n = nodes.num_rows
    sources, targets = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    rel = np.asarray(relations, dtype=np.int64)
    num_codes = 2 * max(len(relation_types), 1)
    # One int64 key per edge: dedup and sort in a single vectorised pass.
    key = sorted_unique((sources * n + targets) * len(relation_types) + rel)
    rel = key % max(len(relation_types), 1)
    pair = key // max(len(relation_types), 1)
    sources, targets = pair // n, pair % n
    del key, pair

    # Each CSR entry as one int64 key (row, code, neighbor); the keys are distinct, so sorting the keys
    # themselves gives the same order as a stable argsort, at a fraction of the time and memory.
    m = len(sources)
    packed = np.empty(2 * m, dtype=np.int64)
    np.multiply(sources * num_codes + 2 * rel, n, out=packed[:m])
    packed[:m] += targets
    np.multiply(targets * num_codes + 2 * rel + 1, n, out=packed[m:])
    packed[m:] += sources
    packed.sort()
    neighbors = (packed % n).astype(np.int32)
    packed //= n
    codes = (packed % num_codes).astype(np.int16)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(packed // num_codes, minlength=n), out=indptr[1:])
    del packed

    type_codes = np.asarray(node_type_codes, dtype=np.int16)
    schema = _schema(type_codes[sources], rel, type_codes[targets], node_types, relation_types)
    meta = dict(metadata or {})
    meta["fingerprint"] = _fingerprint(nodes, neighbors, codes, text_digest)
    return KnowledgeGraph(
        nodes.drop_columns(["type"]) if "type" in nodes.column_names else nodes,
        type_codes,
        node_types,
        relation_types,
        indptr,
        neighbors,
        codes,
        schema,
        meta,
    )


def _schema(
    src_types: I16, rel: I64, dst_types: I16, node_types: list[str], relation_types: list[str]
) -> list[SchemaTriple]:
    t, r = len(node_types), max(len(relation_types), 1)
    combined = (src_types.astype(np.int64) * r + rel) * t + dst_types
    return schema_from_counts(np.bincount(combined, minlength=t * r * t), node_types, relation_types)


def schema_from_counts(counts: I64, node_types: list[str], relation_types: list[str]) -> list[SchemaTriple]:
    """The schema triples of edge counts keyed ``(source type * relations + relation) * types + target type``."""
    t, r = len(node_types), max(len(relation_types), 1)
    values = np.flatnonzero(counts)
    triples = []
    for value, count in zip(values.tolist(), counts[values].tolist(), strict=True):
        rest, target = divmod(value, t)
        source, relation = divmod(rest, r)
        triples.append(SchemaTriple(node_types[source], relation_types[relation], node_types[target], count))
    return triples


def _encode(column: pa.Array | pa.ChunkedArray) -> tuple[list[str], I16]:
    """Dictionary-encode a string column: (names in order of first appearance, int16 codes)."""
    encoded = pc.dictionary_encode(column)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    names = encoded.dictionary.to_pylist()
    return names, encoded.indices.to_numpy(zero_copy_only=False).astype(np.int16)


def check_unique_ids(ids: pa.ChunkedArray | pa.Array, source: str) -> None:
    """Refuse repeated and empty node ids, naming them."""
    counts = pc.value_counts(ids)
    repeated = pc.filter(counts, pc.greater(counts.field("counts"), 1))
    if len(repeated):
        values = repeated.field("values").to_pylist()
        raise GraphValidationError(f"{source}: duplicate node ids in " + describe_values(values, len(values)))
    _check_non_empty("id", ids, source)


def _check_non_empty(column: str, values: pa.Array | pa.ChunkedArray, source: str) -> None:
    empty = pc.sum(pc.equal(pc.utf8_length(values), 0)).as_py() or 0
    if empty:
        raise GraphValidationError(f"{source}: column {column!r} is empty in {empty} row(s)")


def _endpoint_indices(endpoints, ids: pa.ChunkedArray, source: str, column: str) -> I64:
    values = string_column(id_values(endpoints, f"{source}: {column}"), "None")
    index = pc.index_in(values, value_set=ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids)
    missing = pc.is_null(index)
    if pc.any(missing).as_py():
        unknown = pc.filter(values, missing).to_pylist()
        rows = np.flatnonzero(missing.to_numpy(zero_copy_only=False)).tolist()
        raise GraphValidationError(
            f"{source}: column {column!r} points at unknown node ids in "
            + describe_values([f"row {r}: {u}" for r, u in zip(rows, unknown, strict=True)], len(unknown))
        )
    return index.to_numpy(zero_copy_only=False).astype(np.int64)


def _fingerprint(nodes: pa.Table, neighbors: I32, codes: I16,
                 digest: hashlib.blake2b | None = None) -> str:
    if digest is None:
        digest = hashlib.blake2b(digest_size=16)
        for name in FINGERPRINT_COLUMNS:
            if name in nodes.column_names:
                for buffer in _string_buffers(nodes.column(name)):
                    digest.update(buffer)
    digest.update(np.ascontiguousarray(neighbors).data)
    digest.update(np.ascontiguousarray(codes).data)
    return digest.hexdigest()


def node_text_digest(batches: Callable[[str], Iterator[pa.Array]]) -> hashlib.blake2b:
    """The node-column part of the fingerprint, read column by column from ``batches(column)`` (each call
    yields that column's chunks in order, e.g. one record batch of an Arrow file at a time): the same digest
    :func:`build_graph_from_arrays` computes over the whole table, with one chunk in memory at a time."""
    digest = hashlib.blake2b(digest_size=16)
    for name in FINGERPRINT_COLUMNS:
        total = sum(int(o[-1] - o[0]) for o in map(_chunk_offsets, batches(name)))
        offset_type = np.int64 if total > OFFSET32_LIMIT else np.int32
        base, first = 0, True
        for chunk in batches(name):  # offsets of every chunk, rebased as one array's
            offsets = _chunk_offsets(chunk)
            digest.update((offsets.astype(np.int64) - offsets[0] + base).astype(offset_type)[0 if first else 1 :].data)
            base += int(offsets[-1] - offsets[0])
            first = False
        for chunk in batches(name):
            offsets = _chunk_offsets(chunk)
            if offsets[-1] > offsets[0]:
                digest.update(memoryview(chunk.buffers()[2])[int(offsets[0]) : int(offsets[-1])])
    return digest


def _chunk_offsets(chunk: pa.Array) -> npt.NDArray[np.int32 | np.int64]:
    """A string chunk's offsets (int32 or, for ``large_string``, int64), without copying."""
    buffer, rows = chunk.buffers()[1], slice(chunk.offset, chunk.offset + len(chunk) + 1)
    if pa.types.is_large_string(chunk.type):
        return np.frombuffer(buffer, dtype=np.int64)[rows]
    return np.frombuffer(buffer, dtype=np.int32)[rows]


def _string_buffers(column: pa.ChunkedArray) -> Iterator:
    """The buffers of ``column`` as one array would have them, without copying the text: a column of several
    chunks (a loader's batches) hashes like its ``combine_chunks()``, so the fingerprint does not depend on how the
    rows were batched. A chunk laid out as a fresh array (offsets from 0, no validity bitmap, no bytes after the
    last string: every graph read from disk) hashes as its own buffers always did; a sliced, filtered or
    concatenated one (the merge of a graph's updates) hashes like that fresh layout, so equal content gives equal
    fingerprints whatever built the column."""
    chunks = column.chunks
    kind = column.type
    if column.null_count or not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        for chunk in chunks if len(chunks) == 1 else [column.combine_chunks()]:
            yield from (buffer for buffer in chunk.buffers() if buffer is not None)
        return
    total = sum(int(o[-1] - o[0]) for o in map(_chunk_offsets, chunks))
    # one array of more than 2 GiB of text would need 64-bit offsets (a large_string): hash them so
    offset_type = np.int64 if pa.types.is_large_string(kind) or total > OFFSET32_LIMIT else np.int32
    spans, base = [], 0
    for k, chunk in enumerate(chunks):
        offsets = _chunk_offsets(chunk)
        spans.append((chunk.buffers()[2], int(offsets[0]), int(offsets[-1])))
        yield (offsets.astype(np.int64) - offsets[0] + base).astype(offset_type)[0 if k == 0 else 1 :].data
        base += int(offsets[-1] - offsets[0])
    for data, start, end in spans:
        if end > start:
            yield memoryview(data)[start:end]
