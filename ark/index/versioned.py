"""Text indexes of a graph that changes: which segments a version's BM25 reads, where they are cached, and which
nodes an update re-indexes (:mod:`ark.index.segments` holds the segments and the merged scoring).

The base's segment is cached in ``<base>/index/segment-<kind>-<settings hash>/`` (built once per base, about as
long as a BM25 build); an update's in ``<graph>/deltas/<version>/index/<kind>-<settings hash>/``, holding only the
documents that update changed: the upserted nodes, and for ``bm25-rel`` (whose documents list neighbours' names)
also every node with an edge added or removed and every neighbour, before or after, of a changed or deleted node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from ..storage.cache_folder import open_cached
from .segments import BM25FFields, Segment, SegmentedBM25, build_segment, doc_maps
from .tokenizer import Tokenizer

# graph.versioning.delta needs pyarrow.compute (~0.1 s), which an offline question on a graph never updated does not
if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..graph.versioning.delta import GraphDelta
    from .graph_index import Document, IndexKind, IndexSettings

SEGMENTED_KINDS = ("bm25", "bm25-rel")


def index_root(graph: KnowledgeGraph) -> Path:
    """The folder whose ``index/`` caches a whole-graph index of ``graph``: the graph's, its current base's, or
    for a version with updates (an index that cannot follow them by segments) its newest update's."""
    root = graph.folder()
    segments = graph.info.version_segments
    return root if segments is None else root / segments.newest_folder()


def follows_updates(graph: KnowledgeGraph, kind: str) -> bool:
    """Whether ``kind`` over ``graph`` is searched through segments (a version with updates since its base)."""
    segments = graph.info.version_segments
    return segments is not None and bool(segments.deltas) and kind in SEGMENTED_KINDS and graph.path is not None


def open_segmented(graph: KnowledgeGraph, kind: str, spec: IndexKind, settings: IndexSettings,
                   fields: dict[str, list[str]] | None,
                   settings_key: str) -> SegmentedBM25:
    """The ``kind`` BM25 of a version with updates, its missing segments built and cached."""
    from ..graph.storage import load_graph_directory, read_graph_meta

    info = graph.info.version_segments
    if info is None:
        raise ValueError(f"graph {graph.info.label()!r} has no updates to search by segments")
    root = graph.folder()
    base_dir = root / info.base
    tokenizer = Tokenizer.from_config(settings["tokenizer"])
    fielded = settings.get("scoring") == "fielded"

    def make(source: KnowledgeGraph, ids: Sequence[str], indices: NDArray[np.int64]) -> Segment:
        docs = _subset_documents(source, indices, kind, spec, settings, fields)
        return build_segment(ids, docs, tokenizer, fielded, bool(settings.get("exact")))

    def base_segment(_work: Path | None) -> Segment:
        base = load_graph_directory(base_dir)
        return make(base, base.nodes.column("id").to_pylist(), np.arange(base.num_nodes))

    base_fingerprint = (read_graph_meta(base_dir).get("metadata") or {}).get("fingerprint")
    segments = [_cached(base_dir / "index" / f"segment-{kind}-{settings_key}", base_fingerprint, settings,
                        base_segment)]
    opened: dict[int, KnowledgeGraph] = {}  # versions built on the way, each from the one before
    if graph.info.stored_version is not None:
        opened[graph.info.stored_version] = graph
    for entry in info.deltas:
        def delta_segment(_work: Path | None, version: int = entry.version) -> Segment:
            ids, cur = changed_documents(root, version, kind, opened)
            return make(cur, ids, np.asarray([cur.index_of(x) for x in ids], dtype=np.int64))

        segments.append(_cached(root / entry.delta / "index" / f"{kind}-{settings_key}", entry.fingerprint,
                                settings, delta_segment))
    maps = doc_maps(segments, graph.nodes.column("id"))
    bm25f = (BM25FFields(names=["names", "text"], weights=[settings["name_weight"], 1.0],
                         b=[settings["name_b"], settings["b"]]) if fielded else None)
    return SegmentedBM25(segments, maps, graph.num_nodes, settings["k1"], settings["b"], tokenizer, bm25f)


def _cached(directory: Path, fingerprint: str | None, settings: IndexSettings,
            build: Callable[[Path | None], Segment]) -> Segment:
    segment: Segment = open_cached(directory, {"fingerprint": fingerprint, "settings": settings, "segment": 1},
                                   build, write=lambda built, folder: built.save(folder), load=Segment.load,
                                   what="BM25 segment")
    return segment


def changed_documents(root: Path, version: int, kind: str, opened: dict[int, KnowledgeGraph]
                      ) -> tuple[list[str], KnowledgeGraph]:
    """The node ids whose ``kind`` documents update ``version`` changed, and that version's graph (``opened``: the
    versions at hand by number, which gains those built here)."""
    from ..graph.versioning import load_delta

    delta = load_delta(root, version)
    cur = _version(root, version, opened)
    upserted = delta.nodes.column("id").to_pylist()
    if kind != "bm25-rel":
        return upserted, cur
    return dirty_relational(_version(root, version - 1, opened), cur, delta), cur


def _version(root: Path, version: int, opened: dict[int, KnowledgeGraph]) -> KnowledgeGraph:
    from ..graph.versioning import next_version, open_version

    if version not in opened:
        previous = opened.get(version - 1)
        opened[version] = (next_version(previous, root, version) if previous is not None else
                           open_version(root, version))
    return opened[version]


def dirty_relational(prev: KnowledgeGraph, cur: KnowledgeGraph, delta: GraphDelta) -> list[str]:
    """Nodes of ``cur`` whose relational document may differ from ``prev``'s (see the module doc), in ``cur``
    order."""
    touched = set(delta.nodes.column("id").to_pylist())
    for table in (delta.edges_added, delta.edges_removed):
        touched.update(table.column("source").to_pylist())
        touched.update(table.column("target").to_pylist())
    out = {x for x in touched if cur.has_node(x)}
    for x in touched | set(delta.nodes_deleted.to_pylist()):
        for graph in (prev, cur):
            if graph.has_node(x):
                out.update(graph.node_id(int(n)) for n in graph.neighbors(graph.index_of(x)).nodes)
    return sorted((x for x in out if cur.has_node(x)), key=cur.index_of)


class _Subset:
    """Some nodes of a graph as a graph of their own (what the document functions read)."""

    def __init__(self, graph: KnowledgeGraph, indices: NDArray[np.int64]) -> None:
        self.graph, self.indices = graph, np.asarray(indices, dtype=np.int64)
        self.node_types = graph.node_types
        self.node_type_codes = np.asarray(graph.node_type_codes)[self.indices]
        self.metadata = graph.metadata
        self.info = graph.info
        self.num_nodes = len(self.indices)

    def resolve_node_type(self, name: str) -> str:
        return str(self.graph.resolve_node_type(name))

    def text(self, i: int) -> str:
        return str(self.graph.text(int(self.indices[i])))

    def name(self, i: int) -> str:
        return str(self.graph.name(int(self.indices[i])))

    def node_id(self, i: int) -> str:
        return str(self.graph.node_id(int(self.indices[i])))

    def properties(self, i: int) -> dict[str, object]:
        return dict(self.graph.properties(int(self.indices[i])))


def _subset_documents(graph: KnowledgeGraph, indices: NDArray[np.int64], kind: str, spec: IndexKind,
                      settings: IndexSettings, fields: dict[str, list[str]] | None) -> list[Document]:
    """The ``kind`` documents of nodes ``indices`` of ``graph``, as a whole-graph build makes them."""
    from .kinds import _with_names

    view = _Subset(graph, indices)
    if kind == "bm25-rel":
        from ..loaders.documents import relational_document

        limit = settings["max_neighbors_per_relation"]
        texts = (relational_document(graph, int(i), limit) for i in indices)
        return list(_with_names(view, settings, texts))
    docs = spec.documents(view, settings, fields)
    if isinstance(docs, pa.Array | pa.ChunkedArray):
        return ["" if d is None else d for d in docs.to_pylist()]
    return list(docs)
