"""The built-in index kinds of :func:`ark.index.open_index`: ``bm25`` (node documents), ``bm25-rel`` (node text plus
neighbour names by relation, STaRK's ``add_rel``) and ``dense`` (MiniLM sentence embeddings, the ``dense`` extra).

The two BM25 kinds score in one of two ways (the ``scoring`` setting):

- ``fielded`` (default): BM25F over two fields, the node's *names* (its name, synonyms and identifiers, per node
  type: :func:`~ark.index.graph_index.resolve_name_keys`) weighted ``name_weight`` times the *text* (the node
  document: its text, or for ``bm25-rel`` its text plus relations), and, with ``exact`` on, the nodes one of whose
  names equals the whole query ranked first (:mod:`ark.index.exact`). A model searching "FBN1" or "OMIM:154700"
  gets that node, not the diseases whose long texts mention it.
- ``plain``: Okapi BM25 over the node document, as the papers' BM25 baseline (and bm25s, its test oracle).

A new kind is one :class:`~ark.index.graph_index.IndexKind` registered with
:func:`~ark.index.graph_index.register_index_kind`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pyarrow as pa

from .bm25 import BM25Index
from .exact import ExactNamesBuilder
from .graph_index import (
    Document,
    IndexKind,
    IndexParams,
    IndexSettings,
    NodeSource,
    node_documents,
    node_names,
    register_index_kind,
    resolve_name_keys,
)
from .tokenizer import Tokenizer

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from sentence_transformers import SentenceTransformer

    from ..graph import KnowledgeGraph
    from .dense import DenseIndex

RELATIONAL_MAX_NEIGHBORS = 50  # neighbors listed per relation in a bm25-rel document
SCORINGS = ("fielded", "plain")
# BM25F defaults, measured on the HPO name-lookup set and the descriptive question sets (docs/methods/ark.md):
# a term in a node's names counts NAME_WEIGHT times one in its text; short name lists are favoured mildly.
NAME_WEIGHT = 3.0
NAME_B = 0.5
_BM25_PARAMS = ("k1", "b", "tokenizer", "scoring", "names", "name_weight", "name_b", "exact")


def _bm25_graph_defaults(graph: KnowledgeGraph, params: IndexParams) -> IndexParams:
    if params.get("scoring", "fielded") == "fielded":
        params["names"] = resolve_name_keys(graph, params.get("names"))
    return params


def _given(value: float | None, default: float) -> float:
    return default if value is None else value


def _bm25_settings(kind: str) -> Callable[[IndexParams, dict[str, list[str]] | None], IndexSettings]:
    def settings(params: IndexParams, fields: dict[str, list[str]] | None) -> IndexSettings:
        unknown = set(params) - set(_BM25_PARAMS)
        if unknown:
            raise ValueError(f"unknown {kind} index settings {sorted(unknown)}; valid: {', '.join(_BM25_PARAMS)}")
        scoring = params.get("scoring", "fielded")
        if scoring not in SCORINGS:
            raise ValueError(f"unknown scoring {scoring!r}; valid: {', '.join(SCORINGS)}")
        tokenizer = params.get("tokenizer") or Tokenizer()
        out: IndexSettings = {"kind": kind, "k1": params.get("k1", 1.5), "b": params.get("b", 0.75),
                              "tokenizer": tokenizer.config()}
        if kind == "bm25-rel":
            if fields:
                raise ValueError("fields do not apply to kind='bm25-rel' (its documents are the relational documents)")
            out["max_neighbors_per_relation"] = RELATIONAL_MAX_NEIGHBORS
        out["fields"] = fields or {}
        if scoring == "fielded":  # plain settings stay as they were, so existing plain caches remain valid
            out["scoring"], out["names"] = "fielded", params["names"] or {}
            out["name_weight"] = float(_given(params.get("name_weight"), NAME_WEIGHT))
            out["name_b"] = float(_given(params.get("name_b"), NAME_B))
            out["exact"] = bool(params.get("exact", True))
        elif any(params.get(key) is not None for key in ("names", "name_weight", "name_b", "exact")):
            raise ValueError("names, name_weight, name_b and exact apply to scoring='fielded' only")
        return out

    return settings


def _build_bm25(docs: Iterable[Document], settings: IndexSettings, num_docs: int, cache_dir: Path | None,
                progress: bool) -> BM25Index:
    tokenizer = Tokenizer.from_config(settings["tokenizer"])  # the config identifies the tokenizer completely
    if settings.get("scoring") != "fielded":
        texts = cast(Iterable[str], docs)  # plain documents are texts (or the graph's Arrow text column)
        return BM25Index.build(texts, k1=settings["k1"], b=settings["b"], tokenizer=tokenizer, num_docs=num_docs,
                               progress=progress, workdir=cache_dir)
    exact = ExactNamesBuilder() if settings["exact"] else None  # 16 bytes a name, not the names themselves

    pairs = cast(Iterable[tuple[list[str], str]], docs)  # fielded documents pair a node's names with its text

    def records() -> Iterable[tuple[str, str]]:
        for node, (node_names_, text) in enumerate(pairs):
            if exact is not None:
                exact.add(node, node_names_)
            yield "\n".join(node_names_), text

    index = BM25Index.build_fielded(records(), ("names", "text"), (settings["name_weight"], 1.0),
                                    (settings["name_b"], settings["b"]), k1=settings["k1"], tokenizer=tokenizer,
                                    num_docs=num_docs, progress=progress, workdir=cache_dir)
    if exact is not None:
        index.exact = exact.finish()
    return index


def _with_names(graph: NodeSource, settings: IndexSettings, texts: Iterable[str]) -> Iterable[Document]:
    """Plain scoring indexes the texts; fielded scoring pairs each with the node's names."""
    if settings.get("scoring") != "fielded":
        return texts
    return zip(node_names(graph, settings["names"]), texts, strict=True)


def _relational_documents(graph: NodeSource, settings: IndexSettings,
                          fields: dict[str, list[str]] | None) -> Iterable[Document]:
    from ark.graph import KnowledgeGraph
    from ark.loaders.documents import relational_document

    if not isinstance(graph, KnowledgeGraph):  # versioned indexes make their bm25-rel documents from whole graphs
        raise TypeError(f"bm25-rel documents are read from a KnowledgeGraph, not a {type(graph).__name__}")
    texts = (relational_document(graph, i, settings["max_neighbors_per_relation"]) for i in range(graph.num_nodes))
    return _with_names(graph, settings, texts)


def _dense_settings(params: IndexParams, fields: dict[str, list[str]] | None) -> IndexSettings:
    from .dense import DEFAULT_MODEL

    unknown = set(params) - {"model"}
    if unknown:
        raise ValueError(f"unknown dense index settings {sorted(unknown)}; valid: model")
    return {"kind": "dense", "model": params.get("model") or DEFAULT_MODEL, "fields": fields or {}}


def _build_dense(docs: Iterable[Document], settings: IndexSettings, num_docs: int, cache_dir: Path | None,
                 progress: bool) -> DenseIndex:
    from .dense import DenseIndex

    texts = list(cast(Iterable[str], docs))  # dense documents are texts
    return DenseIndex.build(texts, model=settings["model"], cache_dir=cache_dir, progress=progress)


def _build_dense_reusing(graph: KnowledgeGraph, docs: Iterable[Document], settings: IndexSettings,
                         cache_dir: Path | None, progress: bool, directory: Path | None) -> DenseIndex:
    """The dense index of ``graph``, reusing the vectors of nodes whose document an earlier version of the graph
    already embedded (:mod:`ark.index.reuse`)."""
    from . import dense
    from .reuse import embed_following_updates

    model = settings["model"]
    encoder: list[SentenceTransformer] = []  # loaded on the first text that needs embedding

    def embed(texts: Sequence[str], work: Path | None) -> NDArray[np.float32]:
        if not encoder:
            encoder.append(dense.load_encoder(model))
        return dense.embed_texts(texts, model, cache_dir=work, progress=progress, encoder=encoder[0])

    name = directory.name if directory is not None else ""
    texts = list(cast(Iterable[str], docs))  # dense documents are texts
    vectors, keys = embed_following_updates(graph, texts, name, settings, directory, embed, cache_dir)
    index = dense.DenseIndex(vectors, model, encoder[0] if encoder else None)
    index.doc_keys = keys
    return index


def _load_dense(directory: Path) -> DenseIndex:
    from .dense import DenseIndex

    return DenseIndex.load(directory)


def _node_documents(graph: NodeSource, settings: IndexSettings, fields: dict[str,
                    list[str]] | None) -> Iterable[Document]:
    """A node's document is its text (paired with its names for fielded scoring). Plain scoring without fields
    reads the graph's text column as Arrow strings (no Python string per node; a fifth of the build time on a
    1.9M-node graph)."""
    nodes = getattr(graph, "nodes", None)
    if (settings.get("scoring") != "fielded" and not fields and isinstance(nodes, pa.Table)
            and "text" in nodes.column_names):
        return nodes.column("text")
    return _with_names(graph, settings, node_documents(graph, fields))


def _plain_documents(graph: NodeSource, settings: IndexSettings, fields: dict[str,
                     list[str]] | None) -> Iterable[str]:
    return node_documents(graph, fields)


register_index_kind(IndexKind("bm25", _bm25_settings("bm25"), _node_documents, _build_bm25, BM25Index.load,
                              _bm25_graph_defaults))
register_index_kind(IndexKind("bm25-rel", _bm25_settings("bm25-rel"), _relational_documents, _build_bm25,
                              BM25Index.load, _bm25_graph_defaults))
register_index_kind(IndexKind("dense", _dense_settings, _plain_documents, _build_dense, _load_dense,
                              build_graph=_build_dense_reusing))
