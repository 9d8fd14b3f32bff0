"""The Cypher database of a graph that changes (:mod:`ark.graph.versioning`): one database per version.

The embedded engine allows one writer or many readers, never both, so a published database is never opened for
writing: each version has its own folder, named by the version manifest (``cypher/`` for version 0,
``cypher/versions/NNNNNN/`` after the update that made version N; a compaction keeps its version's), and a reader
opens its own version's database read-only. The database of version N is made once, by whoever needs it first (the
updater, ``ark graph update``, when version N-1 had one; else the first reader), in a temporary folder published
atomically: when version N-1's database exists and its tables need only additions (new node types, relations,
FROM/TO pairs, property columns appended), it is copied and the update applied to the copy (:func:`apply_update`);
otherwise (a table, pair or column that would change or go) the graph is exported whole. Either way the database
holds what an export of the version would (the same nodes, properties, ``idx`` values and edges). Databases of
versions before a compaction's base are removed then (:mod:`ark.graph.versioning.prune`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..storage.checksums import DamagedFileError
from .schema import CypherSchema, PropertyColumn, build_schema

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

# A database updated in place keeps the pages its old rows held (ladybug reuses few of them): HPO's 24 MB grew to
# 63, 115, 171 MB over three updates of 1,000 nodes. Once the previous version's file is this many times the size
# of the whole export it descends from, the next version is exported whole again.
GROWTH_LIMIT = 2.0


def database_folder(graph: KnowledgeGraph, name: str) -> Path:
    """The folder of ``graph``'s version holding the database ``name`` (``ladybug-<settings hash>``)."""
    segments = graph.info.version_segments
    return graph.folder() / (segments.cypher if segments is not None else "cypher") / name


def schema_changes(old: CypherSchema, new: CypherSchema) -> list[str] | None:
    """The statements that turn ``old``'s tables into ``new``'s by additions only (new node tables, property
    columns appended, new relationship tables and FROM/TO pairs); None when a table, column or pair would change
    or go (the database is then exported whole)."""
    from .export import create_node_table, create_rel_table

    statements: list[str] = []
    before = {spec.label: spec for spec in old.nodes}
    for spec in new.nodes:
        had = before.pop(spec.label, None)
        if had is None:
            statements.append(create_node_table(spec))
            continue
        if had.node_type != spec.node_type or spec.properties[:len(had.properties)] != had.properties:
            return None
        statements += [f"ALTER TABLE `{spec.label}` ADD `{c.name}` {c.type}"
                       for c in spec.properties[len(had.properties):]]
    relations = {spec.label: spec for spec in old.rels}
    for rel in new.rels:
        was = relations.pop(rel.label, None)
        if was is None:
            statements.append(create_rel_table(rel))
            continue
        pairs = {(p.source, p.target) for p in was.pairs}
        if was.relation != rel.relation or not pairs <= {(p.source, p.target) for p in rel.pairs}:
            return None
        statements += [f"ALTER TABLE `{rel.label}` ADD FROM `{p.source}` TO `{p.target}`"
                       for p in rel.pairs if (p.source, p.target) not in pairs]
    return None if before or relations else statements


def previous_database(graph: KnowledgeGraph, name: str, settings: dict[str, Any]) -> tuple[Path, CypherSchema,
                      int] | None:
    """(database file, schema, size of the last whole export it descends from) of the version before ``graph``'s,
    when ``graph``'s version was made from it by an update and its database ``name`` is built with ``settings``;
    else None."""
    from ..graph.versioning import read_manifest
    from .export import MANIFEST, cached_database

    version = graph.info.version
    if graph.path is None or version == 0:
        return None
    manifest = read_manifest(graph.path)  # version made by an update (a compacted one too: its delta stays)
    if manifest is None or manifest.update_of(version) is None:
        return None
    fingerprints = [h.fingerprint for h in manifest.history if h.version == version - 1]
    if not fingerprints or fingerprints[-1] is None:
        return None
    directory = Path(graph.path) / manifest.cypher_folder(version - 1) / name
    found = cached_database(directory, fingerprints[-1], settings)
    if found is None:
        return None
    meta = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    return found.path, found.schema, int(meta.get("exported_bytes") or found.path.stat().st_size)


def database_after_update(graph: KnowledgeGraph, progress: bool = False) -> Any:
    """The database of a version just made by an update, made now when the previous version had one (so the updater,
    not the first reader, pays for it); None when it had none or the embedded engine is not installed."""
    from .export import build_settings, ladybug_database, settings_hash

    try:
        settings = build_settings()
    except ImportError:
        return None
    if previous_database(graph, f"ladybug-{settings_hash(settings)}", settings) is None:
        return None
    return ladybug_database(graph, progress=progress)


def follow_update(graph: KnowledgeGraph, db_file: Path, name: str, settings: dict[str, Any],
                  property_columns: dict[str, tuple[PropertyColumn, ...]], progress: bool = False
                  ) -> tuple[CypherSchema, int] | None:
    """Make ``db_file`` the database of ``graph`` from the previous version's (copied, the update applied); its
    schema and the size of the whole export it descends from. None (nothing written) when there is none, the
    tables would change (see the module doc) or the previous file outgrew :data:`GROWTH_LIMIT` times that export."""
    from ..graph.versioning import load_delta

    previous = previous_database(graph, name, settings)
    if previous is None or previous[0].stat().st_size > GROWTH_LIMIT * previous[2]:
        return None
    schema = build_schema(graph, property_columns=property_columns)
    changes = schema_changes(previous[1], schema)
    if changes is None:
        return None
    try:
        delta = load_delta(graph.folder(), graph.info.version)
    except (DamagedFileError, OSError, ValueError):
        return None  # its files are gone or damaged: export
    shutil.copyfile(previous[0], db_file)
    apply_update(db_file, graph, delta, schema, changes)
    if progress:
        import sys

        print(f"[cypher export] version {graph.info.version}: the previous version's database with "
              "the update applied", file=sys.stderr, flush=True)
    return schema, previous[2]


def apply_update(db_file: Path, graph: KnowledgeGraph, delta: Any, schema: CypherSchema, changes: list[str],
                 threads: int = 2) -> None:
    """Turn the database at ``db_file`` (the previous version's, a private copy) into ``graph``'s by ``delta``.

    The tables are extended by ``changes`` (:func:`schema_changes`); in one transaction, upserted nodes the copy
    holds in the same table get their new columns in place (their edges stay), deleted nodes and nodes whose type
    changed are removed with their edges, removed edges between the other nodes are removed, new and re-typed rows
    are loaded with every edge of the re-typed ones, and the added edges; last, every node whose index moved gets its
    new ``idx``. Bulk work goes through Parquet files (``COPY`` and ``LOAD FROM`` with primary-key matches)."""
    import ladybug

    upserted = pc.unique(delta.nodes.column("id")).to_pylist()
    staging = Path(tempfile.mkdtemp(prefix=".parquet-", dir=db_file.parent))
    database = ladybug.Database(str(db_file), max_num_threads=threads)
    connection = ladybug.Connection(database)

    def run(statement: str, table: pa.Table) -> Any:
        if table.num_rows:
            file = staging / f"{len(list(staging.iterdir()))}.parquet"
            pq.write_table(table, file)
            return connection.execute(statement.replace("FILE", f"'{_quote(file)}'"))
        return None

    try:
        for statement in changes:
            connection.execute(statement)
        connection.execute("BEGIN TRANSACTION")  # one commit: each statement committing alone costs ~0.1 s
        held = _held_in(run, schema, upserted)
        labels = dict(zip(upserted, _labels_of(graph, schema, _indices(graph, pa.array(upserted, pa.string()))),
                          strict=True))
        in_place = [x for x in upserted if held.get(x) == labels[x]]
        moved = [x for x in upserted if x in held and held[x] != labels[x]]
        touched = set(moved) | set(delta.nodes_deleted.to_pylist())
        gone = pa.table({"node_key": pa.array(sorted(touched), pa.string())})
        for spec in schema.nodes:
            run(f"LOAD FROM FILE MATCH (n:`{spec.label}` {{id: node_key}}) DETACH DELETE n", gone)
        _remove_edges(run, graph, schema, delta, touched)
        _set_rows(run, graph, schema, in_place)
        _load_rows(run, graph, schema, [x for x in upserted if held.get(x) != labels[x]])
        _load_edges(run, graph, schema, delta, moved, touched)
        _renumber(run, connection, graph, schema)
        connection.execute("COMMIT")
    finally:
        connection.close()
        database.close()
        shutil.rmtree(staging, ignore_errors=True)


def _held_in(run: Any, schema: CypherSchema, ids: list[str]) -> dict[str, str]:
    """Node id -> the table holding it in the database, for those of ``ids`` it holds."""
    held: dict[str, str] = {}
    wanted = pa.table({"node_key": pa.array(ids, pa.string())})
    for spec in schema.nodes:
        found = run(f"LOAD FROM FILE MATCH (n:`{spec.label}` {{id: node_key}}) RETURN n.id", wanted)
        if found is not None:
            held.update(dict.fromkeys(found.get_as_arrow().column(0).to_pylist(), spec.label))
    return held


def _labels_of(graph: KnowledgeGraph, schema: CypherSchema, indices: np.ndarray) -> np.ndarray:
    """The node table label of each node index."""
    tables = {spec.node_type: spec.label for spec in schema.nodes}  # a type left without nodes has none
    labels = np.array([tables.get(t, "") for t in graph.node_types], dtype=object)
    return labels[np.asarray(graph.node_type_codes)[indices]]


def _indices(graph: KnowledgeGraph, ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    found = pc.fill_null(pc.index_in(ids, value_set=graph.nodes.column("id").combine_chunks()), -1)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)


def _untouched(edges: pa.Table, touched: set[str]) -> pa.Table:
    """The edges of ``edges`` (source, target, relation) whose endpoints are both untouched."""
    names = pa.array(list(touched), pa.string())
    return edges.filter(pc.invert(pc.or_(pc.is_in(edges.column("source"), names),
                                         pc.is_in(edges.column("target"), names))))


def _edge_matches(run: Any, graph: KnowledgeGraph, schema: CypherSchema, edges: pa.Table, action: str) -> Iterator[Any]:
    """Run ``MATCH (a)-[e]->(b) <action>`` over ``edges`` (source, target, relation; nodes ``graph`` has), one
    statement per relation and endpoint tables; each statement's result."""
    src, dst = _indices(graph, edges.column("source")), _indices(graph, edges.column("target"))
    src_labels, dst_labels = _labels_of(graph, schema, src), _labels_of(graph, schema, dst)
    relations = np.array(edges.column("relation").to_pylist(), dtype=object)
    for key in sorted(set(zip(relations.tolist(), src_labels.tolist(), dst_labels.tolist(), strict=True))):
        rows = (relations == key[0]) & (src_labels == key[1]) & (dst_labels == key[2])
        table = pa.table({"s": edges.column("source").filter(pa.array(rows)),
                          "t": edges.column("target").filter(pa.array(rows)),
                          "r": edges.column("relation").filter(pa.array(rows))})
        yield run(f"LOAD FROM FILE MATCH (a:`{key[1]}` {{id: s}})-[e:`{schema.rel_label(key[0])}`]->"
                  f"(b:`{key[2]}` {{id: t}}) {action}", table)


def _remove_edges(run: Any, graph: KnowledgeGraph, schema: CypherSchema, delta: Any, touched: set[str]) -> None:
    """Remove every copy of each removed edge whose endpoints are both untouched (the others went with them)."""
    if delta.edges_removed.num_rows:
        for _ in _edge_matches(run, graph, schema, _untouched(delta.edges_removed, touched), "DELETE e"):
            pass


def _row_tables(graph: KnowledgeGraph, schema: CypherSchema, ids: list[str]) -> Iterator[tuple[Any, pa.Table]]:
    """(node table, its rows) of the nodes ``ids`` of ``graph``, by table."""
    from .export import node_table

    indices = np.sort(_indices(graph, pa.array(ids, pa.string())))
    codes = np.asarray(graph.node_type_codes)[indices]
    tables = {spec.node_type: spec for spec in schema.nodes}
    for code, node_type in enumerate(graph.node_types):
        chosen = indices[codes == code]
        if chosen.size:
            spec = tables[node_type]
            yield spec, node_table(graph, spec, chosen)


def _load_rows(run: Any, graph: KnowledgeGraph, schema: CypherSchema, ids: list[str]) -> None:
    """Load the rows of nodes the database does not hold (in their table)."""
    for spec, table in _row_tables(graph, schema, ids):
        run(f"COPY `{spec.label}` FROM FILE", table)


def _set_rows(run: Any, graph: KnowledgeGraph, schema: CypherSchema, ids: list[str]) -> None:
    """Write the new columns of nodes the database holds in their table (their edges untouched)."""
    for spec, table in _row_tables(graph, schema, ids):
        table = table.rename_columns([f"v_{name}" for name in table.column_names])
        assign = ", ".join(f"n.`{name}` = v_{name}" for name, _ in spec.columns if name != "id")
        run(f"LOAD FROM FILE MATCH (n:`{spec.label}` {{id: v_id}}) SET {assign}", table)


def _load_edges(run: Any, graph: KnowledgeGraph, schema: CypherSchema, delta: Any, moved: list[str],
                touched: set[str]) -> None:
    """The new version's edges of re-typed nodes, and the added edges between untouched nodes."""
    from .export import edge_tables
    from .stream import edge_chunks

    mark = np.zeros(graph.num_nodes, dtype=bool)
    mark[_indices(graph, pa.array(moved, pa.string()))] = True
    theirs = [(src[mine], dst[mine], rel[mine]) for src, dst, rel in edge_chunks(graph)
              if (mine := mark[src] | mark[dst]).any()]  # read a chunk at a time: the graph's edges are not held
    added = _untouched(delta.edges_added, touched) if delta.edges_added.num_rows else delta.edges_added
    if added.num_rows:  # an added edge the graph had already is no new edge (the graph holds each edge once)
        held: set[tuple[str, str, str]] = set()
        for found in _edge_matches(run, graph, schema, added, "RETURN s, t, r"):
            rows = found.get_as_arrow()  # read once: the result is consumed
            held.update(zip(*(rows.column(k).to_pylist() for k in range(3)), strict=True))
        added = added.filter(pa.array([key not in held for key in zip(
            *(added.column(c).to_pylist() for c in ("source", "target", "relation")), strict=True)]))
    codes = {name: code for code, name in enumerate(graph.relation_types)}
    extra = (_indices(graph, added.column("source")), _indices(graph, added.column("target")),
             np.array([codes[r] for r in added.column("relation").to_pylist()], dtype=np.int64))
    src, dst, rel = (np.concatenate([*(part[k] for part in theirs), extra[k]]) for k in range(3))
    for (label, source, target), table in edge_tables(graph, schema, (src, dst, rel)).items():
        run(f"COPY `{label}` FROM FILE (from='{source}', to='{target}')", table)


def _renumber(run: Any, connection: Any, graph: KnowledgeGraph, schema: CypherSchema) -> None:
    """Set ``idx`` to the new version's node index where it moved."""
    for spec in schema.nodes:
        old = connection.execute(f"MATCH (n:`{spec.label}`) RETURN n.id AS node_key, n.idx AS idx").get_as_arrow()
        new = _indices(graph, old.column("node_key"))
        moved = np.asarray(old.column("idx").to_numpy()) != new
        if moved.any():
            run(f"LOAD FROM FILE MATCH (n:`{spec.label}` {{id: node_key}}) SET n.idx = new_idx",
                pa.table({"node_key": old.column("node_key").filter(pa.array(moved)),
                          "new_idx": pa.array(new[moved], pa.int64())}))


def _quote(path: Path) -> str:
    return str(path).replace("\\", "\\\\").replace("'", "\\'")


def verify_databases(path: str | Path) -> list[tuple[Path, int]]:
    """Check the Cypher databases of the current version of the graph at ``path`` against their manifests: the
    version's fingerprint and each file's checksum, hashed in full; (folder, files checked) for each. Raises
    :class:`~ark.storage.checksums.DamagedFileError`."""
    from ..graph.info import GraphInfo
    from ..graph.storage import read_graph_meta
    from ..graph.versioning import read_manifest
    from ..storage.checksums import DamagedFileError, check_files

    path = Path(path)
    manifest = read_manifest(path)
    version = manifest.current if manifest else 0
    fingerprint = (manifest.entry(version).fingerprint if manifest
                   else GraphInfo.from_metadata(read_graph_meta(path).get("metadata") or {}).fingerprint)
    folder = path / (manifest.cypher_folder(version) if manifest else "cypher")
    checked = []
    fix = "remove the folder: the next Cypher query exports the graph again"
    for directory in sorted(folder.glob("ladybug-*")):
        try:
            meta = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DamagedFileError(directory / "manifest.json", f"unreadable: {exc}", fix) from exc
        if meta.get("fingerprint") != fingerprint:
            raise DamagedFileError(directory, f"a database of another graph version (fingerprint "
                                              f"{meta.get('fingerprint')!r}, version {version} is {fingerprint!r})",
                                   fix)
        records = meta.get("files") or {}
        check_files(directory, records, fix, full=True)
        checked.append((directory, len(records)))
    return checked
