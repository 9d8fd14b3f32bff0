"""The built-in index kinds of :func:`ark.index.open_index`: ``bm25`` (node documents), ``bm25-rel`` (node text plus
neighbour names by relation, STaRK's ``add_rel``) and ``dense`` (MiniLM sentence embeddings, the ``dense`` extra).

A new kind is one :class:`~ark.index.graph_index.IndexKind` registered with
:func:`~ark.index.graph_index.register_index_kind`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .bm25 import BM25Index
from .graph_index import IndexKind, node_documents, register_index_kind
from .tokenizer import Tokenizer

RELATIONAL_MAX_NEIGHBORS = 50  # neighbors listed per relation in a bm25-rel document


def _bm25_settings(kind: str):
    def settings(params: dict[str, Any], fields: dict[str, list[str]] | None) -> dict[str, Any]:
        unknown = set(params) - {"k1", "b", "tokenizer"}
        if unknown:
            raise ValueError(f"unknown {kind} index settings {sorted(unknown)}; valid: k1, b, tokenizer")
        tokenizer = params.get("tokenizer") or Tokenizer()
        out = {"kind": kind, "k1": params.get("k1", 1.5), "b": params.get("b", 0.75), "tokenizer": tokenizer.config()}
        if kind == "bm25-rel":
            if fields:
                raise ValueError("fields do not apply to kind='bm25-rel' (its documents are the relational documents)")
            out["max_neighbors_per_relation"] = RELATIONAL_MAX_NEIGHBORS
        out["fields"] = fields or {}
        return out

    return settings


def _build_bm25(docs: Iterable[str], settings: dict[str, Any], num_docs: int, cache_dir: Path | None,
                progress: bool) -> BM25Index:
    tokenizer = Tokenizer.from_config(settings["tokenizer"])  # the config identifies the tokenizer completely
    return BM25Index.build(docs, k1=settings["k1"], b=settings["b"], tokenizer=tokenizer, num_docs=num_docs,
                           progress=progress)


def _relational_documents(graph: Any, settings: dict[str, Any], fields: Any) -> Iterable[str]:
    from ark.loaders.documents import relational_document

    return (relational_document(graph, i, settings["max_neighbors_per_relation"]) for i in range(graph.num_nodes))


def _dense_settings(params: dict[str, Any], fields: dict[str, list[str]] | None) -> dict[str, Any]:
    from .dense import DEFAULT_MODEL

    unknown = set(params) - {"model"}
    if unknown:
        raise ValueError(f"unknown dense index settings {sorted(unknown)}; valid: model")
    return {"kind": "dense", "model": params.get("model") or DEFAULT_MODEL, "fields": fields or {}}


def _build_dense(docs: Iterable[str], settings: dict[str, Any], num_docs: int, cache_dir: Path | None,
                 progress: bool) -> Any:
    from .dense import DenseIndex

    return DenseIndex.build(list(docs), model=settings["model"], cache_dir=cache_dir, progress=progress)


def _load_dense(directory: Path) -> Any:
    from .dense import DenseIndex

    return DenseIndex.load(directory)


def _node_documents(graph: Any, settings: dict[str, Any], fields: dict[str, list[str]] | None) -> Iterable[str]:
    return node_documents(graph, fields)


register_index_kind(IndexKind("bm25", _bm25_settings("bm25"), _node_documents, _build_bm25, BM25Index.load))
register_index_kind(IndexKind("bm25-rel", _bm25_settings("bm25-rel"), _relational_documents, _build_bm25,
                              BM25Index.load))
register_index_kind(IndexKind("dense", _dense_settings, _node_documents, _build_dense, _load_dense))
