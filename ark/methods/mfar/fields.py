"""mFAR's fields and their scorers (Li et al. 2025, Section 3): each node is split into fields, each field scored
against the query lexically (BM25) and densely (cosine), giving 2 × F scores per (query, node).

Fields: the node's text (its document), its names, and, per relation of the graph, the names of its neighbours by
that relation (both directions, at most :data:`NEIGHBOUR_CAP`). Lexical scores come from BM25 indexes over each
field's documents: text and names are the graph's cached ``bm25`` indexes, the neighbour fields are built in memory
when the method opens (seconds on HPO). Dense scores use one frozen embedder (MiniLM by default): the cached
``dense`` indexes of text and names, and for a neighbour field the normalised mean of the neighbours' name vectors
(so no extra embedding pass: the deviation from the paper's per-field encodings is documented in
docs/methods/mfar.md). Lexical scores are divided by each query's largest score of that field in the candidate
pool (BM25's scale varies by query); cosines are used as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph

NEIGHBOUR_CAP = 50


@dataclass
class FieldScorers:
    """The per-field scorers of one graph: ``names`` of the F fields, a BM25 index and a dense matrix for each."""

    names: list[str]
    lexical: list[Any]  # objects with search(query, k) and score(query, candidates)
    dense: list[np.ndarray]  # (num_nodes, dim) unit rows per field
    encoder: Any  # embed_query(text) -> unit vector

    @property
    def num_features(self) -> int:
        return 2 * len(self.names)

    def embed(self, queries: Sequence[str]) -> np.ndarray:
        return np.stack([np.asarray(self.encoder.embed_query(q), dtype=np.float32) for q in queries])

    def candidates(self, query: str, vector: np.ndarray, k: int) -> np.ndarray:
        """The pool: each field's top ``k`` by BM25 and by cosine."""
        pool: list[np.ndarray] = []
        for index, matrix in zip(self.lexical, self.dense, strict=True):
            found, _ = index.search(query, k)
            pool.append(np.asarray(found, dtype=np.int64))
            cosines = matrix @ vector
            top = min(k, len(cosines))
            pool.append(np.argpartition(-cosines, top - 1)[:top].astype(np.int64))
        return np.unique(np.concatenate(pool))

    def features(self, query: str, vector: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """(len(candidates), 2F): per field its normalised BM25 score, then its cosine."""
        columns = []
        for index, matrix in zip(self.lexical, self.dense, strict=True):
            lexical = np.asarray(index.score(query, candidates), dtype=np.float32)
            peak = float(lexical.max()) if len(lexical) else 0.0
            columns.append(lexical / peak if peak > 0 else lexical)
            columns.append(matrix[candidates] @ vector)
        return np.stack(columns, axis=1).astype(np.float32)


def neighbour_documents(graph: KnowledgeGraph, relation: int) -> list[str]:
    """Per node, the names of its neighbours by ``relation`` (both directions), at most :data:`NEIGHBOUR_CAP`."""
    codes = np.asarray(graph.code_array)
    neighbours = np.asarray(graph.neighbor_array)
    indptr = np.asarray(graph.indptr)
    docs = []
    for node in range(graph.num_nodes):
        start, end = int(indptr[node]), int(indptr[node + 1])
        row = neighbours[start:end][codes[start:end] // 2 == relation][:NEIGHBOUR_CAP]
        docs.append(" ; ".join(graph.name(int(j)) for j in row))
    return docs


def neighbour_means(graph: KnowledgeGraph, names: np.ndarray, relation: int) -> np.ndarray:
    """Per node, the normalised mean of its ``relation`` neighbours' name vectors (zero without neighbours)."""
    codes = np.asarray(graph.code_array)
    indptr = np.asarray(graph.indptr)
    rows = np.repeat(np.arange(graph.num_nodes), np.diff(indptr))
    keep = codes // 2 == relation
    sums = np.zeros_like(names)
    np.add.at(sums, rows[keep], names[np.asarray(graph.neighbor_array)[keep]])
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return (sums / np.maximum(norms, 1e-12)).astype(np.float32)


def open_field_scorers(graph: KnowledgeGraph, progress: bool = False) -> FieldScorers:
    """The scorers of ``graph``'s fields (text, names, one neighbour field per relation)."""
    from ark.index import open_index
    from ark.index.bm25 import BM25Index
    from ark.index.embedders import embeddings_of, open_embedding_index

    names_only = {node_type: ["name"] for node_type in graph.node_types}
    text_dense = open_embedding_index(graph, None, progress=progress)
    names_dense = open_embedding_index(graph, None, fields=names_only, progress=progress)
    name_vectors = np.asarray(embeddings_of(names_dense), dtype=np.float32)
    lexical: list[Any] = [open_index(graph, "bm25", scoring="plain", progress=progress).index,
                          open_index(graph, "bm25", fields=names_only, scoring="plain", progress=progress).index]
    dense = [np.asarray(embeddings_of(text_dense), dtype=np.float32), name_vectors]
    field_names = ["text", "names"]
    for code, relation in enumerate(graph.relation_types):
        lexical.append(BM25Index.build(neighbour_documents(graph, code)))
        dense.append(neighbour_means(graph, name_vectors, code))
        field_names.append(f"neighbours:{relation}")
    return FieldScorers(field_names, lexical, dense, text_dense.index)

