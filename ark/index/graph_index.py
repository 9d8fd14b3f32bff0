"""Binding a text index to a graph: node-type filters, per-type document fields and an on-disk cache."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypedDict, Unpack, runtime_checkable

import numpy as np

from ark.arrays import F32, I64, Bools, Ints
from ark.index.postings import IndexFormatError
from ark.storage.cache_folder import StaleCache, open_cached

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from .tokenizer import Tokenizer

# A node's document: its text, or for fielded BM25 its names and its text (plain scoring may hand the builder the
# graph's Arrow text column instead, :func:`ark.index.kinds._node_documents`).
Document = str | tuple[list[str], str]


class IndexParams(TypedDict, total=False):
    """:func:`open_index`'s keyword settings (the ``bm25`` kinds read all but ``model``; ``dense`` only ``model``)."""

    k1: float
    b: float
    tokenizer: Tokenizer | None
    scoring: str
    names: dict[str, list[str]] | None
    name_weight: float | None
    name_b: float | None
    exact: bool | None
    model: str | None


class IndexSettings(TypedDict, total=False):
    """The JSON settings that identify a build, recorded in the cache manifest (a change rebuilds): a kind's
    ``settings`` function writes the keys that apply to it."""

    kind: str
    k1: float
    b: float
    tokenizer: dict[str, object]  # Tokenizer.config()
    max_neighbors_per_relation: int
    fields: dict[str, list[str]]
    scoring: str
    names: dict[str, list[str]]
    name_weight: float
    name_b: float
    exact: bool
    model: str


class NodeIndex(Protocol):
    """What :class:`GraphTextIndex` wraps: a BM25, segmented BM25 or dense index, one document per node."""

    @property
    def num_docs(self) -> int: ...

    def search(self, query: str, k: int, mask: Bools | None = None) -> tuple[I64, F32]: ...

    def score(self, query: str, candidates: I64) -> F32: ...


class SavedIndex(NodeIndex, Protocol):
    """A :class:`NodeIndex` that a kind builds, saves to its cache folder and loads back."""

    def save(self, directory: Path) -> None: ...


class NodeSource(Protocol):
    """What the document and name functions read of a graph: a :class:`~ark.graph.KnowledgeGraph`, or some of its
    nodes as a graph of their own (a version's changed nodes, :mod:`ark.index.versioned`)."""

    node_types: list[str]
    node_type_codes: Ints
    metadata: dict[str, object]

    @property
    def num_nodes(self) -> int: ...

    def resolve_node_type(self, name: str) -> str: ...

    def text(self, i: int) -> str: ...

    def name(self, i: int) -> str: ...

    def node_id(self, i: int) -> str: ...

    def properties(self, i: int) -> Mapping[str, object]: ...


@runtime_checkable
class TextIndex(Protocol):
    """What the agent's tools rank with: global top-k and scoring of a candidate subset."""

    def search(self, query: str, k: int, node_types: str | Sequence[str] | None = None) -> list[tuple[int, float]]:
        ...

    def score(self, query: str, candidates: Ints | Sequence[int]) -> F32:
        ...


@runtime_checkable
class TermHighlighter(Protocol):
    """An index that knows the words a query matches (a BM25 index: the query's tokens and their stems); ``None``
    from an index that has no terms (dense)."""

    def highlight_terms(self, query: str) -> list[str] | None:
        ...


class GraphTextIndex:
    """A BM25 or dense index over a graph's nodes (node ``i`` is document ``i``)."""

    def __init__(self, graph: KnowledgeGraph, index: NodeIndex) -> None:
        if index.num_docs != graph.num_nodes:
            raise ValueError(f"index has {index.num_docs} documents but the graph has {graph.num_nodes} nodes")
        self.graph = graph
        self.index = index
        # checked once here: a runtime Protocol isinstance costs ~10 us, too much for every search call
        self._highlighter: TermHighlighter | None = index if isinstance(index, TermHighlighter) else None

    def warm_up_in_background(self) -> None:
        """Load the index's compiled search kernels on a daemon thread before its first query
        (:mod:`ark.index.kernel_warm_up`); nothing for indexes without them."""
        from . import kernel_warm_up

        kernel_warm_up.start(self.index)

    def type_mask(self, node_types: str | Sequence[str] | None) -> Bools | None:
        """Bool mask of nodes whose type is one of ``node_types`` (names resolved by the graph), or None."""
        return None if node_types is None else self.graph.type_mask(node_types)

    def search(self, query: str, k: int, node_types: str | Sequence[str] | None = None) -> list[tuple[int, float]]:
        """Top-``k`` ``(node, score)`` pairs, descending, optionally restricted to some node types."""
        ids, scores = self.index.search(query, k, mask=self.type_mask(node_types))
        return list(zip(np.asarray(ids).tolist(), np.asarray(scores).tolist(), strict=True))  # Python ints, floats

    def score(self, query: str, candidates: Ints | Sequence[int]) -> F32:
        """Scores of just ``candidates`` (same order), with corpus-wide statistics."""
        return self.index.score(query, np.asarray(candidates))

    def matched_terms(self, query: str, node: int) -> list[str]:
        """Query tokens found in the node's document (empty for indexes without terms, such as dense)."""
        finder = getattr(self.index, "matched_terms", None)
        return finder(query, node) if finder is not None else []

    def highlight_terms(self, query: str) -> list[str] | None:
        """The words to highlight for ``query`` (see :class:`TermHighlighter`); None for an index without terms."""
        return self._highlighter.highlight_terms(query) if self._highlighter is not None else None

    def __repr__(self) -> str:
        return f"GraphTextIndex({self.graph!r}, {self.index!r})"


def _field_value(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(_field_value(v) for v in value)
    return str(value)


def node_documents(graph: NodeSource, fields: dict[str, list[str]] | None = None) -> Iterator[str]:
    """Each node's document: ``graph.text(i)``, or for types listed in ``fields`` the named properties joined.

    ``fields`` maps a node type (resolved by the graph) to property keys; the special key ``"text"`` means the
    node's text and ``"name"`` its name. Types not listed keep ``graph.text(i)``.
    """
    by_code: dict[int, list[str]] = {}
    for node_type, type_keys in (fields or {}).items():
        by_code[graph.node_types.index(graph.resolve_node_type(node_type))] = list(type_keys)
    codes = np.asarray(graph.node_type_codes)
    for i in range(graph.num_nodes):
        keys = by_code.get(int(codes[i]))
        if keys is None:
            yield graph.text(i) or ""
            continue
        props = graph.properties(i)
        parts = []
        for key in keys:
            if key == "text":
                parts.append(graph.text(i) or "")
            elif key == "name":
                parts.append(graph.name(i) or "")
            else:
                parts.append(_field_value(props.get(key)))
        yield " ".join(p for p in parts if p)


DEFAULT_NAME_KEYS = ("name", "synonyms", "aliases")


def resolve_name_keys(graph: NodeSource, names: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Which attributes name a node, per node type: ``names`` (or the graph's ``info.name_fields``, set by
    its loader) maps node types, or ``"*"`` for every other type, to keys: ``"name"``, ``"id"`` or property keys.

    Without either, a node is named by its name and its ``synonyms``/``aliases`` properties when it has them
    (identifiers are left out: in many graphs they are bare numbers that would match numbers in questions).
    """
    config = names if names is not None else (getattr(graph, "metadata", {}) or {}).get("name_fields")
    config = dict(config or {"*": list(DEFAULT_NAME_KEYS)})
    fallback = list(config.pop("*", DEFAULT_NAME_KEYS))
    resolved = {t: list(fallback) for t in graph.node_types}
    for node_type, keys in config.items():
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise ValueError(f"name keys of {node_type!r} must be a list of strings, got {keys!r}")
        resolved[graph.resolve_node_type(node_type)] = list(keys)
    return resolved


def node_names(graph: NodeSource, keys_by_type: dict[str, list[str]]) -> Iterator[list[str]]:
    """Each node's names: the values of its type's name keys (list properties give one name per item)."""
    codes = np.asarray(graph.node_type_codes)
    by_code = [keys_by_type.get(t, []) for t in graph.node_types]
    with_ids = any("id" in keys for keys in by_code)
    for start in range(0, graph.num_nodes, NAME_BATCH):
        stop = min(start + NAME_BATCH, graph.num_nodes)
        names = _column_slice(graph, "name", start, stop)
        ids = _column_slice(graph, "id", start, stop) if with_ids else []
        for i in range(start, stop):
            keys = by_code[int(codes[i])]
            props = graph.properties(i) if any(k not in ("name", "id") for k in keys) else {}
            values: list[str] = []
            for key in keys:
                value = names[i - start] if key == "name" else ids[i - start] if key == "id" else props.get(key)
                if isinstance(value, (list, tuple)):
                    values.extend(str(v) for v in value if v not in (None, ""))
                elif value not in (None, ""):
                    values.append(str(value))
            yield list(dict.fromkeys(values))


NAME_BATCH = 8192  # nodes whose names and ids are read at a time


def _column_slice(graph: NodeSource, column: str, start: int, stop: int) -> list[object]:
    """Nodes ``start..stop-1``'s ``name`` or ``id``: a slice of the graph's Arrow column where it has one (the
    graph's own ``name(i)`` would keep the whole column as Python strings for its lifetime), else asked node by
    node."""
    import pyarrow as pa

    nodes = getattr(graph, "nodes", None)
    if isinstance(nodes, pa.Table) and column in nodes.column_names:
        return nodes.column(column).slice(start, stop - start).to_pylist()
    read = graph.name if column == "name" else graph.node_id
    return [read(i) for i in range(start, stop)]


def settings_hash(settings: Mapping[str, object]) -> str:
    """Short stable hash of index settings (the cache directory suffix)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]


def _graph_fingerprint(graph: KnowledgeGraph) -> str | None:
    return getattr(graph, "metadata", {}).get("fingerprint")


@dataclass(frozen=True)
class IndexKind:
    """One kind of node index: the settings that identify a build, the documents it indexes, how to build and load.

    ``settings(params, fields)`` turns :func:`open_index`'s keyword parameters into the JSON settings recorded in the
    cache manifest (a change rebuilds); ``documents(graph, settings, fields)`` yields one document per node;
    ``build(docs, settings, num_docs, cache_dir, progress)`` and ``load(directory)`` make the index object.
    ``graph_defaults(graph, params)``, when given, fills parameters whose defaults depend on the graph (such as
    which attributes name a node) before ``settings`` records them. ``build_graph(graph, docs, settings, cache_dir,
    progress, directory)``, when given, builds instead of ``build`` with the graph at hand and the cache folder
    (``directory``, None in memory): how the ``dense`` kind reuses earlier versions' vectors
    (:mod:`ark.index.reuse`).
    """

    name: str
    settings: Callable[[IndexParams, dict[str, list[str]] | None], IndexSettings]
    documents: Callable[[NodeSource, IndexSettings, dict[str, list[str]] | None], Iterable[Document]]
    build: Callable[[Iterable[Document], IndexSettings, int, Path | None, bool], SavedIndex]
    load: Callable[[Path], SavedIndex]
    graph_defaults: Callable[[KnowledgeGraph, IndexParams], IndexParams] | None = None
    build_graph: Callable[[KnowledgeGraph, Iterable[Document], IndexSettings, Path | None, bool, Path | None],
                          SavedIndex] | None = None


INDEX_KINDS: dict[str, IndexKind] = {}


def register_index_kind(kind: IndexKind) -> IndexKind:
    """Make ``kind`` available to :func:`open_index` under its name."""
    INDEX_KINDS[kind.name] = kind
    return kind


def open_index(graph: KnowledgeGraph, kind: str = "bm25", fields: dict[str, list[str]] | None = None,
               progress: bool = True,
               **params: Unpack[IndexParams]) -> GraphTextIndex:
    """Open the ``kind`` index of ``graph`` (one of :data:`INDEX_KINDS`), building it on first use.

    ``params`` are the kind's settings (``bm25``/``bm25-rel``: ``k1``, ``b``, ``tokenizer``, ``scoring``
    (``"fielded"``, the default: BM25F over names and text with exact names first; ``"plain"``: BM25 over the
    node document), ``names``, ``name_weight``, ``name_b``, ``exact``; ``dense``: ``model``; see
    :mod:`ark.index.kinds`).
    Cached in ``<graph.path>/index/<kind>-<settings hash>/`` and rebuilt only when the graph's fingerprint or
    the settings change; written atomically with per-file checksums, checked on opening, built once by concurrent
    processes (:func:`ark.storage.cache_folder.open_cached`). An in-memory graph (``graph.path is None``), one
    without a fingerprint, or one whose folder cannot be written (read-only, full) is indexed in memory.
    """
    from . import kinds  # noqa: F401 - registers the built-in kinds

    if kind not in INDEX_KINDS:
        raise ValueError(f"unknown index kind {kind!r}; choose one of {tuple(INDEX_KINDS)}")
    spec = INDEX_KINDS[kind]
    if spec.graph_defaults is not None:
        params = spec.graph_defaults(graph, params.copy())
    settings = spec.settings(params, fields)

    fingerprint = _graph_fingerprint(graph)
    graph_path = getattr(graph, "path", None)
    directory: Path | None = None

    def build(cache_dir: Path | None) -> SavedIndex:
        docs = spec.documents(graph, settings, fields)
        if spec.build_graph is not None:
            return spec.build_graph(graph, docs, settings, cache_dir, progress, directory)
        return spec.build(docs, settings, graph.num_nodes, cache_dir, progress)

    if graph_path is None or fingerprint is None:
        return GraphTextIndex(graph, build(None))
    from .versioned import follows_updates, index_root, open_segmented

    if follows_updates(graph, kind):  # a graph updated since its base: the base's segment + one per update
        return GraphTextIndex(graph, open_segmented(graph, kind, spec, settings, fields, settings_hash(settings)))

    directory = index_root(graph) / "index" / f"{kind}-{settings_hash(settings)}"
    index = open_cached(directory, {"fingerprint": fingerprint, "settings": settings}, build,
                        write=_save,
                        load=lambda folder: _load_current_format(spec, kind, folder), what=f"{kind} index")
    return GraphTextIndex(graph, index)


def _save(built: SavedIndex, folder: Path) -> None:
    built.save(folder)


def _load_current_format(spec: IndexKind, kind: str, folder: Path) -> SavedIndex:
    """The saved index, or :class:`StaleCache` (saying so on one line) when an older ARK wrote it in another format."""
    try:
        return spec.load(folder)
    except IndexFormatError as exc:
        print(f"rebuilding the {kind} index of this graph: {exc}", file=sys.stderr)
        raise StaleCache(str(exc)) from exc
