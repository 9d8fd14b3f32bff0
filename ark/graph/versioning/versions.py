"""Graphs that change: an immutable base plus delta segments behind one versioned manifest.

A graph directory that has been updated holds ``versions.json`` beside its files::

    GRAPH/graph.json, nodes.arrow, ...   the first base (version 0), never modified
    GRAPH/deltas/000001/                 one folder per update (:class:`~ark.graph.versioning.delta.GraphDelta` files)
    GRAPH/bases/000007/                  a compacted base (the graph of version 7 saved whole)
    GRAPH/versions.json                  {"current": 7, "base": {...}, "history": [...]} with each file's checksum
    GRAPH/cypher/versions/000007/        version 7's Cypher database (:mod:`ark.graphdb.versioned`; version 0's is
                                         GRAPH/cypher/), named by the manifest's entry for the update that made it

An update writes its delta folder atomically, then replaces ``versions.json`` atomically (write to a temporary
file, rename): a process killed at any point leaves the old version or the new one, never a mix; a delta folder
the manifest does not list is ignored and overwritten by the next update. One updater at a time (a second is
refused, :func:`~ark.storage.locks.output_lock`). A reader reads the manifest once and builds that version in memory
(:func:`~ark.graph.versioning.delta.merge_version`), so it keeps one version for as long as it holds the graph;
opening the graph again picks up a newer one. Compaction saves the current version as a new base and points the
manifest at it.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from ...storage.atomic import atomic_directory, atomic_write_text
from ...storage.checksums import DamagedFileError, check_files
from ...storage.locks import output_lock
from ..errors import GraphValidationError, describe_values
from ..info import DeltaSegment, VersionSegments
from ..storage import MANIFEST, load_graph_directory, read_graph_meta, save_graph, verify_graph_directory
from ..store import KnowledgeGraph
from .delta import GraphDelta, edge_keys
from .fingerprint import (
    add_sums,
    change_sums,
    content_sums,
    sums_from_json,
    sums_to_json,
    version_fingerprint,
    zero_sums,
)
from .manifest import (
    FIX,
    VersionEntry,
    VersionManifest,
    base_entry,
    initial_manifest,
    read_manifest,
    update_entry,
)
from .merge import merge_version
from .prune import prune_superseded

FINGERPRINT_FORMAT = 2  # a version's fingerprint updated by its changes (versioning.fingerprint); 1 (absent): whole


def _manifest(path: Path) -> VersionManifest:
    """The manifest of the graph at ``path``, the initial one of a graph never updated."""
    return read_manifest(path) or initial_manifest(read_graph_meta(path))


def open_version(path: str | Path, version: int | None = None, mmap: bool = True) -> KnowledgeGraph:
    """The graph of ``version`` (default: the current one) of the graph directory ``path``.

    Versions from the current base on can be opened; an earlier one raises ``ValueError`` naming the range.
    """
    path = Path(path)
    manifest = _manifest(path)
    current, base_version = manifest.current, manifest.base_version
    version = current if version is None else int(version)
    if not base_version <= version <= current:
        raise ValueError(f"graph {path} has versions {base_version}..{current} (earlier ones were compacted); "
                         f"got {version}")
    base = load_graph_directory(path / manifest.base_path, mmap=mmap)
    entries = manifest.updates_upto(version)
    if not entries:
        graph = base
    else:
        deltas = [GraphDelta.load(path / str(e.delta), dict(e.files), FIX) for e in entries]
        metadata = {k: v for k, v in base.metadata.items() if k != "fingerprint"}
        graph = merge_version(base, deltas, metadata)
        graph.metadata["fingerprint"] = _opened_fingerprint(entries[-1])
    return _attach(graph, path, manifest, version)


def _attach(graph: KnowledgeGraph, path: Path, manifest: VersionManifest, version: int) -> KnowledgeGraph:
    """Mark ``graph`` as ``version`` of the graph at ``path``: what its indexes read to follow the updates."""
    graph.path = path
    graph.metadata["graph_version"] = version
    segments = VersionSegments(manifest.base_path, manifest.base_version,
                               tuple(DeltaSegment(e.version, str(e.delta), e.fingerprint)
                                     for e in manifest.updates_upto(version)),
                               manifest.cypher_folder(version))
    graph.metadata["version_segments"] = segments.to_json()
    return graph


def load_delta(path: str | Path, version: int) -> GraphDelta:
    """The delta that made ``version`` of the graph at ``path`` (its files checked)."""
    path = Path(path)
    update = _manifest(path).update_of(version)
    if update is not None:
        return GraphDelta.load(path / str(update.delta), dict(update.files), FIX)
    raise ValueError(f"graph {path} has no update making version {version}")


def next_version(previous: KnowledgeGraph, path: str | Path, version: int) -> KnowledgeGraph:
    """``version`` of the graph at ``path`` built from ``previous`` (version - 1) and its delta: one merge instead
    of replaying every delta since the base (for walking through versions in order)."""
    path = Path(path)
    manifest = _manifest(path)
    metadata = {k: v for k, v in previous.metadata.items()
                if k not in ("fingerprint", "graph_version", "version_segments")}
    graph = merge_version(previous, [load_delta(path, version)], metadata)
    graph.metadata["fingerprint"] = _opened_fingerprint(manifest.entry(version))
    return _attach(graph, path, manifest, version)


def _opened_fingerprint(entry: VersionEntry) -> str:
    """The fingerprint of the version an update ``entry`` made: the one it recorded (format 2). An update recorded
    before format 2 numbered a changed node last, where the merge now keeps it in place: its version opens with
    that fingerprint hashed again, so nothing cached by node index under the old numbering is taken for it."""
    if entry.fingerprint_format == FINGERPRINT_FORMAT and entry.fingerprint is not None:
        return entry.fingerprint
    return hashlib.blake2b(f"renumbered:{entry.fingerprint}".encode(), digest_size=16).hexdigest()


def _sums_of(path: Path, manifest: VersionManifest, graph: KnowledgeGraph) -> dict[str, list[int]]:
    """The fingerprint sums of ``graph`` (the current version) relative to its base: recorded by its update, zero
    for a base, or (a version written before fingerprint format 2) computed from both graphs once."""
    entry = manifest.entry(manifest.current)
    if not entry.is_update:
        return zero_sums()
    if entry.sums is not None:
        return sums_from_json(entry.sums)
    base = load_graph_directory(path / manifest.base_path)
    return add_sums(content_sums(graph), content_sums(base), -1)


def recompute_fingerprint(path: str | Path, version: int | None = None) -> tuple[str | None, str | None]:
    """(recorded, recomputed from the content) fingerprint of ``version`` (default: current) of the graph at
    ``path``: the node and edge sums hashed from scratch over the version and its base (slow on a large graph;
    the check of the incremental sums). Recomputed is None for a version recorded before fingerprint format 2."""
    path = Path(path)
    manifest = _manifest(path)
    version = manifest.current if version is None else int(version)
    graph, entry = open_version(path, version), manifest.entry(version)
    if not entry.is_update:
        return entry.fingerprint, graph.info.fingerprint
    if entry.fingerprint_format != FINGERPRINT_FORMAT:
        return entry.fingerprint, None
    base = load_graph_directory(path / manifest.base_path)
    sums = add_sums(content_sums(graph), content_sums(base), -1)
    return entry.fingerprint, version_fingerprint(manifest.base_fingerprint(), sums, graph.nodes.column("id"),
                                                     graph.node_types, graph.relation_types)


def check_delta(graph: KnowledgeGraph, delta: GraphDelta) -> None:
    """Refuse a delta that names absent nodes or edges, or edges whose endpoints would not exist (naming them)."""
    delta.check_consistent()
    missing = [x for x in delta.nodes_deleted.to_pylist() if not graph.has_node(x)]
    if missing:
        raise GraphValidationError("cannot delete unknown node id(s): " + describe_values(missing, len(missing)))
    deleted, upserted = set(delta.nodes_deleted.to_pylist()), set(delta.nodes.column("id").to_pylist())

    def present(x: str) -> bool:
        return x in upserted or (x not in deleted and graph.has_node(x))

    bad = [f"{s} -[{r}]-> {t}" for s, t, r in edge_keys(delta.edges_added) if not (present(s) and present(t))]
    if bad:
        raise GraphValidationError("edge(s) to or from unknown node ids: " + describe_values(bad, len(bad)))
    removed = edge_keys(delta.edges_removed)
    if removed:
        existing = _existing_edges(graph, {s for s, _, _ in removed})
        absent = [f"{s} -[{r}]-> {t}" for s, t, r in removed if (s, t, r) not in existing]
        if absent:
            raise GraphValidationError("cannot delete edge(s) the graph does not have: "
                                       + describe_values(absent, len(absent)))
    empty_rows = [x for x, t in zip(delta.nodes.column("id").to_pylist(), delta.nodes.column("type").to_pylist(),
                                    strict=True) if not x or not t]
    if empty_rows:
        raise GraphValidationError("node rows with an empty id or type: " + describe_values(empty_rows,
                                                                                          len(empty_rows)))


def _existing_edges(graph: KnowledgeGraph, sources: set[str]) -> set[tuple[str, str, str]]:
    """The graph's edges leaving the nodes ``sources`` (those present), as (source, target, relation) ids: read
    from their rows of the adjacency, not from all edges (a large graph has millions)."""
    relations = graph.relation_types
    found: set[tuple[str, str, str]] = set()
    for source in sources:
        if graph.has_node(source):
            out = graph.neighbors(graph.index_of(source), direction="out")
            found.update((source, graph.node_id(d), relations[r])
                         for d, r in zip(out.nodes.tolist(), out.relations.tolist(), strict=True))
    return found


def update_graph(path: str | Path, delta: GraphDelta, note: str = "",
                 current: KnowledgeGraph | None = None) -> KnowledgeGraph:
    """Apply ``delta`` to the current version of the graph at ``path``; returns the new version's graph.

    The delta is checked against the current version first (nothing is written when it is refused); the delta
    folder is written atomically and the manifest swapped last (see the module doc). ``current``: the current
    version, when the caller holds it open (used only if it is still the current one; else it is opened).
    """
    path = Path(path)
    with output_lock(path / MANIFEST, what="graph"):
        manifest = _manifest(path)
        if not (current is not None and current.path is not None and Path(current.path) == path
                and current.metadata.get("graph_version", 0) == manifest.current
                and current.metadata.get("fingerprint") == manifest.history[-1].fingerprint):
            current = open_version(path)
        check_delta(current, delta)
        if delta.is_empty():
            raise GraphValidationError("the update changes nothing (no nodes, edges or deletions given)")
        version = manifest.current + 1
        folder = f"deltas/{version:06d}"
        (path / "deltas").mkdir(exist_ok=True)
        with atomic_directory(path / folder) as tmp:
            records = delta.save(tmp)
        metadata = {k: v for k, v in current.metadata.items()
                    if k not in ("fingerprint", "graph_version", "version_segments")}
        sums = add_sums(_sums_of(path, manifest, current), change_sums(current, delta))
        graph = merge_version(current, [delta], metadata)  # the same content as the base with every delta
        fingerprint = version_fingerprint(manifest.base_fingerprint(), sums, graph.nodes.column("id"),
                                          graph.node_types, graph.relation_types)
        graph.metadata["fingerprint"] = fingerprint
        manifest = manifest.with_update(update_entry(version, folder, records, _now(), delta.counts(), note,
                                                     fingerprint, FINGERPRINT_FORMAT, sums_to_json(sums)))
        atomic_write_text(path / MANIFEST, manifest.dumps())
    return _attach(graph, path, manifest, version)


def compact_graph(path: str | Path) -> int:
    """Save the current version as a new base and point the manifest at it; returns the version compacted."""
    path = Path(path)
    with output_lock(path / MANIFEST, what="graph"):
        manifest = read_manifest(path)
        if manifest is None or manifest.current == manifest.base_version:
            raise GraphValidationError(f"{path}: nothing to compact (no update since the base)")
        version = manifest.current
        graph = open_version(path, version)
        for key in ("graph_version", "version_segments"):
            graph.metadata.pop(key, None)
        folder = f"bases/{version:06d}"
        (path / "bases").mkdir(exist_ok=True)
        save_graph(graph, path / folder)
        manifest = manifest.with_base(base_entry(version, "compaction", _now(), graph.num_nodes, graph.num_edges,
                                                 graph.info.fingerprint), folder)
        atomic_write_text(path / MANIFEST, manifest.dumps())
        prune_superseded(path, manifest.base_version)
    return version


def verify_versions(path: str | Path) -> int:
    """Hash every delta file of the current version in full (the base is checked as any graph) and its content
    against its recorded fingerprint (:func:`recompute_fingerprint`); the number of files checked."""
    path = Path(path)
    manifest = read_manifest(path)
    if manifest is None:
        return 0
    count = 0
    if manifest.base_path != ".":
        count += verify_graph_directory(path / manifest.base_path, FIX)
    for entry in manifest.updates_upto(manifest.current):
        check_files(path / str(entry.delta), dict(entry.files), FIX, full=True)
        count += len(entry.files)
    recorded, recomputed = recompute_fingerprint(path)
    if recomputed is not None and recomputed != recorded:
        raise DamagedFileError(path / MANIFEST, f"version {manifest.current}'s content hashes to fingerprint "
                               f"{recomputed}, not the {recorded} its update recorded", FIX)
    return count


def version_history(path: str | Path) -> list[VersionEntry]:
    """The manifest's history (version, kind, created, counts, note), oldest first; empty for a graph never
    updated."""
    manifest = read_manifest(path)
    return list(manifest.history) if manifest is not None else []


def version_of_fingerprint(path: str | Path, fingerprint: str | None) -> int | None:
    """The newest version of the graph at ``path`` whose fingerprint is ``fingerprint`` (what a model trained on an
    earlier version recorded), or None when no version has it."""
    if fingerprint is None:
        return None
    found = [h.version for h in version_history(path) if h.fingerprint == fingerprint]
    return int(found[-1]) if found else None


def version_trained_on(graph: KnowledgeGraph, fingerprint: str | None) -> int | None:
    """The version of ``graph`` whose fingerprint is ``fingerprint`` (what a model trained on an earlier version of
    an updated graph recorded), or None when ``graph`` has no folder or no version of it has that fingerprint."""
    return None if graph.path is None else version_of_fingerprint(graph.path, fingerprint)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class VersionFollower:
    """Follows the graph at ``path`` for a long-lived reader (a server): :meth:`latest` returns the graph it is
    given while the version manifest is unchanged (one ``stat``), else the newest version, opened."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stamp: tuple[int, int] | None = None

    def latest(self, graph: KnowledgeGraph) -> KnowledgeGraph:
        try:
            stat = (self.path / MANIFEST).stat()
        except FileNotFoundError:
            return graph
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            manifest = read_manifest(self.path)
            if manifest is not None and manifest.current != graph.info.version:
                graph = open_version(self.path)
            self._stamp = stamp
        return graph
