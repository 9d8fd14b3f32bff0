"""Write a :class:`~ark.graph.KnowledgeGraph` into an embedded ladybug database (once), cached beside the graph.

The database goes to ``<graph.path>/cypher/ladybug-<settings hash>/graph.lbug`` (for a version of a graph that
changes, to that version's folder: :mod:`ark.graphdb.versioned`, which also makes it from the previous version's)
with a ``manifest.json`` holding the graph's fingerprint, the build settings, the
:class:`~ark.graphdb.schema.CypherSchema` and the file's checksum; it is rebuilt when the fingerprint or settings
change, and published atomically (a folder without a manifest is never trusted). A
graph held only in memory, or one whose folder cannot be written, is exported to a temporary folder removed when
the engine closes (or the process exits).

Nodes and edges travel as Parquet files loaded with ``COPY ... FROM``, the engine's bulk path, a bounded chunk at a
time (:mod:`ark.graphdb.stream`): the export's memory does not grow with the graph.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..storage.atomic import atomic_directory
from ..storage.checksums import file_records
from ..storage.locks import build_lock
from .schema import CypherSchema, PropertyColumn, build_schema, convert_property
from .stream import (
    ExportChunks,
    edge_parts,
    node_index_chunks,
    release_pages,
    scan_property_columns,
    take_rows,
)

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

LAYOUT_VERSION = 1  # bump when the exported tables change
DB_FILE = "graph.lbug"
MANIFEST = "manifest.json"
_ARROW_TYPES = {"STRING": pa.string(), "INT64": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(),
                "STRING[]": pa.list_(pa.string()), "DOUBLE[]": pa.list_(pa.float64())}


@dataclass(frozen=True)
class LadybugDatabase:
    """A built database: its file, its schema, and whether it lives in a temporary folder."""

    path: Path
    schema: CypherSchema
    temporary: bool = False


def settings_hash(settings: dict[str, Any]) -> str:
    """Short stable hash of the build settings (the cache folder's suffix)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    try:
        return json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _writable(directory: Path) -> bool:
    """Whether ``directory`` (or, if missing, its nearest existing parent) can be written to."""
    for candidate in (directory, *directory.parents):
        if candidate.exists():
            return candidate.is_dir() and os.access(candidate, os.W_OK | os.X_OK)
    return False


def ladybug_version() -> str:
    import ladybug

    return str(getattr(ladybug, "__version__", "unknown"))


def build_settings() -> dict[str, Any]:
    return {"engine": "ladybug", "ladybug": ladybug_version(), "layout": LAYOUT_VERSION}


def cached_database(directory: Path, fingerprint: str, settings: dict[str, Any]) -> LadybugDatabase | None:
    manifest = _read_manifest(directory)
    if (manifest is not None and manifest.get("fingerprint") == fingerprint
            and manifest.get("settings") == settings and (directory / DB_FILE).is_file()):
        return LadybugDatabase(directory / DB_FILE, CypherSchema.from_dict(manifest["schema"]))
    return None


def ladybug_database(graph: KnowledgeGraph, *, cache: bool = True, progress: bool = False,
                     chunks: ExportChunks | None = None) -> LadybugDatabase:
    """The ladybug database of ``graph``, built on first use (see the module docstring for the cache), an export
    loading ``chunks`` at a time (default :class:`~ark.graphdb.stream.ExportChunks`)."""
    settings = build_settings()
    fingerprint = graph.info.fingerprint
    graph_path = getattr(graph, "path", None)
    if cache and graph_path is not None and fingerprint is not None:
        from .versioned import database_folder

        directory = database_folder(graph, f"ladybug-{settings_hash(settings)}")
        cached = cached_database(directory, fingerprint, settings)
        if cached is not None:
            return cached
        if _writable(directory.parent):
            try:
                with build_lock(directory):  # one builder: a process starting meanwhile waits, then opens it
                    cached = cached_database(directory, fingerprint, settings)
                    if cached is not None:
                        return cached
                    with atomic_directory(directory) as tmp:
                        schema, made, exported = _build(graph, tmp, directory.name, settings, progress, chunks)
                        manifest = {"fingerprint": fingerprint, "settings": settings, "schema": schema.to_dict(),
                                    "version": graph.info.version, "made": made,
                                    "exported_bytes": exported,
                                    "files": file_records(tmp, [DB_FILE])}
                        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
                return LadybugDatabase(directory / DB_FILE, schema)
            except PermissionError:
                pass  # the folder became unwritable meanwhile: fall through to a temporary database
    folder = Path(tempfile.mkdtemp(prefix="ark-cypher-"))
    atexit.register(shutil.rmtree, folder, True)
    schema = write_database(graph, folder / DB_FILE, progress=progress, chunks=chunks)
    return LadybugDatabase(folder / DB_FILE, schema, temporary=True)


def _build(graph: KnowledgeGraph, folder: Path, name: str, settings: dict[str, Any], progress: bool,
           chunks: ExportChunks | None = None) -> tuple[CypherSchema, str, int]:
    """Write ``graph``'s database into ``folder``: from the previous version's when it can follow the update, else
    exported whole; with how it was made (``update`` or ``export``) and the size of the last whole export."""
    from .versioned import follow_update

    columns = scan_property_columns(graph, (chunks or ExportChunks()).node_rows(graph))
    followed = follow_update(graph, folder / DB_FILE, name, settings, columns, progress)
    if followed is not None:
        return followed[0], "update", followed[1]
    schema = write_database(graph, folder / DB_FILE, progress=progress, property_columns=columns, chunks=chunks)
    return schema, "export", (folder / DB_FILE).stat().st_size


def write_database(graph: KnowledgeGraph, db_file: Path, *, progress: bool = False, threads: int = 2,
                   property_columns: dict[str, tuple[PropertyColumn, ...]] | None = None,
                   chunks: ExportChunks | None = None) -> CypherSchema:
    """Create a ladybug database at ``db_file`` holding ``graph``, loaded ``chunks`` at a time (default
    :class:`~ark.graphdb.stream.ExportChunks`); returns its schema."""
    import ladybug

    chunks = chunks or ExportChunks()
    columns = scan_property_columns(graph, chunks.node_rows(graph)) if property_columns is None else property_columns
    schema = build_schema(graph, property_columns=columns)
    staging = Path(tempfile.mkdtemp(prefix=".parquet-", dir=db_file.parent))
    try:
        database = ladybug.Database(str(db_file), max_num_threads=threads,
                                    buffer_pool_size=chunks.buffer_pool_mb * 2**20)
        connection = ladybug.Connection(database)
        try:
            _copy_nodes(connection, graph, schema, staging, chunks, progress)
            _copy_edges(connection, graph, schema, staging, chunks, progress)
        finally:
            connection.close()
            database.close()
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return schema


def _copy_nodes(connection: Any, graph: KnowledgeGraph, schema: CypherSchema, staging: Path, chunks: ExportChunks,
                progress: bool) -> None:
    """Create every node table and load its nodes, a chunk at a time."""
    rows = chunks.node_rows(graph)
    for spec in schema.nodes:
        connection.execute(create_node_table(spec))
        done = 0
        for indices in node_index_chunks(graph, spec.node_type, rows, chunks.scan_rows):
            file = staging / "nodes.parquet"
            pq.write_table(node_table(graph, spec, indices), file)
            connection.execute(f"COPY `{spec.label}` FROM '{_quote(file)}'")
            file.unlink()
            release_pages(graph)
            done += len(indices)
            _say(progress, f"nodes {spec.label}: {done:,} of {spec.count:,}")


def _copy_edges(connection: Any, graph: KnowledgeGraph, schema: CypherSchema, staging: Path, chunks: ExportChunks,
                progress: bool) -> None:
    """Create every relationship table and load its edges, a chunk at a time (one pass over the graph's CSR)."""
    for spec in schema.rels:
        connection.execute(create_rel_table(spec))
    loaded: dict[tuple[str, str, str], int] = {}
    for key, file in edge_parts(graph, schema, staging, chunks.edge_rows, chunks.scan_rows):
        label, source, target = key
        connection.execute(f"COPY `{label}` FROM '{_quote(file)}' (from='{source}', to='{target}')")
        loaded[key] = loaded.get(key, 0) + pq.read_metadata(file).num_rows
        file.unlink()
        _say(progress, f"edges {label} ({source})->({target}): {loaded[key]:,}")


def create_node_table(spec: Any) -> str:
    columns = ", ".join(f"`{name}` {kind}" for name, kind in spec.columns)
    return f"CREATE NODE TABLE `{spec.label}`({columns}, PRIMARY KEY(id))"


def create_rel_table(spec: Any) -> str:
    pairs = ", ".join(f"FROM `{p.source}` TO `{p.target}`" for p in spec.pairs)
    return f"CREATE REL TABLE `{spec.label}`({pairs})"


def node_properties_by_type(graph: KnowledgeGraph) -> dict[str, list[dict[str, Any]]]:
    """Node type -> the property dicts of its nodes (in node order); empty when no node has properties."""
    column = graph.nodes.column("properties") if "properties" in graph.nodes.column_names else None
    if column is None or pc.all(pc.equal(column, "{}")).as_py() in (True, None):
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for node_type in graph.node_types:
        out[node_type] = [graph.properties(int(i)) for i in graph.nodes_of_type(node_type)]
    return out


def node_table(graph: KnowledgeGraph, spec: Any, indices: np.ndarray | None = None) -> pa.Table:
    """The rows of node table ``spec``: every node of its type, or those at ``indices``."""
    indices = graph.nodes_of_type(spec.node_type) if indices is None else np.asarray(indices, dtype=np.int64)
    data: dict[str, pa.Array] = {
        "id": take_rows(graph.nodes.column("id"), indices),
        "name": take_rows(graph.nodes.column("name"), indices),
        "text": take_rows(graph.nodes.column("text"), indices),
        "idx": pa.array(indices.astype(np.int64), pa.int64()),
    }
    if spec.properties:
        rows = [json.loads(text or "{}") for text in take_rows(graph.nodes.column("properties"), indices).to_pylist()]
        for column in spec.properties:
            data[column.name] = pa.array([convert_property(row.get(column.key), column.type) for row in rows],
                                         _ARROW_TYPES[column.type])
    return pa.table(data)


def edge_tables(graph: KnowledgeGraph, schema: CypherSchema, edges: tuple[np.ndarray, np.ndarray,
                np.ndarray] | None = None
                ) -> dict[tuple[str, str, str], pa.Table]:
    """(rel label, from label, to label) -> table of (from id, to id), one per FROM/TO pair, of the graph's
    ``edges`` (source, target, relation code; default: all)."""
    src, dst, rel = graph.edges() if edges is None else edges
    src, dst, rel = np.asarray(src), np.asarray(dst), np.asarray(rel)
    codes = np.asarray(graph.node_type_codes)
    src_types, dst_types = codes[src], codes[dst]
    ids = graph.nodes.column("id")
    tables: dict[tuple[str, str, str], pa.Table] = {}
    for spec in schema.rels:
        r = graph.relation_types.index(spec.relation)
        for pair in spec.pairs:
            s = graph.node_types.index(schema.node_type_of(pair.source))
            t = graph.node_types.index(schema.node_type_of(pair.target))
            keep = (rel == r) & (src_types == s) & (dst_types == t)
            tables[(spec.label, pair.source, pair.target)] = pa.table({
                "from": ids.take(pa.array(src[keep], pa.int64())),
                "to": ids.take(pa.array(dst[keep], pa.int64())),
            })
    return tables


def _quote(path: Path) -> str:
    return str(path).replace("\\", "\\\\").replace("'", "\\'")


def _say(progress: bool, message: str) -> None:
    if progress:
        import sys

        print(f"[cypher export] {message}", file=sys.stderr, flush=True)
