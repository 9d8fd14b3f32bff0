"""BM25 over a graph that changes: one segment per base and per update, collection statistics merged at query time.

A :class:`Segment` indexes some nodes' documents (named by node id, not index, so it outlives renumbering): its
vocabulary, term-major postings with each field's *raw* frequency, and each field's length per document. The
graph of a version is searched through its base's segment and one segment per update since the base
(:func:`open_segmented`): each node's document comes from the newest segment that indexed it (a changed node, or
for ``bm25-rel`` also a node whose neighbours changed); documents of deleted or re-indexed nodes are left out.

Scores equal a rebuild's over the same documents: the document count, each term's document frequency, the average
length (and each field's for BM25F) are those of the live documents, and the weight of a posting is computed as
:mod:`ark.index.bm25` and :mod:`ark.index.bm25_build` compute it, in the same float operations and order (BM25F's
length-normalised pseudo frequency is formed at query time from the raw frequencies, since the field averages
change with every update). :class:`~ark.index.bm25.BM25Index` rebuilt from scratch is the test oracle.
Segments are written by hand because the saved BM25 index stores BM25F pseudo frequencies already normalised by
the averages of the collection it was built on, which an update changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import numpy as np
import pyarrow as pa

from ..arrays import F32, F64, I32, I64, Bools, Ints, sorted_unique
from .exact import ExactNames
from .graph_index import Document
from .postings import bm25_weights
from .tokenizer import Tokenizer
from .topk import top_k_dense

ARRAYS = ("term_ptr", "docs", "tf", "field_lengths")


@dataclass
class Segment:
    """Postings of some nodes' documents (see the module doc); document ``j`` is node ``node_ids[j]``."""

    node_ids: list[str]
    terms: list[str]
    term_ptr: I64  # one more than terms
    docs: I32  # document per posting, ascending within a term
    tf: F32  # (fields, postings) raw frequencies
    field_lengths: I32  # (fields, documents)
    exact: ExactNames | None = None

    def __post_init__(self) -> None:
        self.term_ids = {term: i for i, term in enumerate(self.terms)}

    def postings(self, term: str) -> tuple[I32, F32]:
        tid = self.term_ids.get(term)
        if tid is None:
            return np.zeros(0, np.int32), np.zeros((self.tf.shape[0], 0), np.float32)
        start, end = int(self.term_ptr[tid]), int(self.term_ptr[tid + 1])
        return self.docs[start:end], self.tf[:, start:end]

    def save(self, directory: Path) -> None:
        for name in ARRAYS:
            np.save(directory / f"{name}.npy", np.ascontiguousarray(getattr(self, name)))
        (directory / "segment.json").write_text(json.dumps({"node_ids": self.node_ids, "terms": self.terms},
                                                           ensure_ascii=False))
        if self.exact is not None:
            self.exact.save(directory)

    @classmethod
    def load(cls, directory: Path) -> Segment:
        meta = json.loads((directory / "segment.json").read_text(encoding="utf-8"))
        arrays = {name: np.load(directory / f"{name}.npy") for name in ARRAYS}
        return cls(meta["node_ids"], meta["terms"], **arrays, exact=ExactNames.load(directory, mmap=False))


class BM25FFields(TypedDict):
    """The fields of a fielded (BM25F) segmented index: their names, term-frequency weights and length
    normalisations, in the segments' field order."""

    names: list[str]
    weights: list[float]
    b: list[float]


def build_segment(node_ids: Sequence[str], docs: Iterable[Document], tokenizer: Tokenizer, fielded: bool,
                  exact: bool) -> Segment:
    """Index ``docs`` (one per node id: a string, or for ``fielded`` a (names, text) pair) into a segment."""
    fields: list[list[str]] = [[], []] if fielded else [[]]
    names: list[list[str]] = []
    for doc in docs:
        if fielded:
            if isinstance(doc, str):
                raise TypeError(f"a fielded segment's documents are (names, text) pairs, got the string {doc[:40]!r}")
            node_names, text = doc
            names.append(list(node_names))
            fields[0].append("\n".join(node_names))
            fields[1].append(text or "")
        elif isinstance(doc, tuple):
            raise TypeError(f"a plain segment's documents are strings, got the pair {doc!r:.60}")
        else:
            fields[0].append(doc or "")
    n = len(node_ids)
    vocabulary: dict[str, int] = {}
    keys, lengths = [], []
    for texts in fields:
        term_of_doc, doc_of = _field_terms(texts, tokenizer, vocabulary)
        lengths.append(np.bincount(doc_of, minlength=n).astype(np.int32))
        keys.append(term_of_doc.astype(np.int64) * max(n, 1) + doc_of)
    unique = sorted_unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
    tf = np.zeros((len(fields), len(unique)), np.float32)
    for f, field_keys in enumerate(keys):
        values, counts = np.unique(field_keys, return_counts=True)
        tf[f, np.searchsorted(unique, values)] = counts
    term_ptr = np.zeros(len(vocabulary) + 1, np.int64)
    np.cumsum(np.bincount(unique // max(n, 1), minlength=len(vocabulary)), out=term_ptr[1:])
    return Segment(list(node_ids), list(vocabulary), term_ptr, (unique % max(n, 1)).astype(np.int32), tf,
                   np.stack(lengths), ExactNames.build(names) if fielded and exact else None)


def _field_terms(texts: list[str], tokenizer: Tokenizer, vocabulary: dict[str, int]) -> tuple[I64, I64]:
    """(term id, document) of every kept token of ``texts``, split as the BM25 build splits them."""
    if not texts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    batch = tokenizer.split(texts)
    ids = np.empty(len(batch.dictionary), np.int64)
    for k, raw in enumerate(batch.dictionary):
        term = tokenizer.term_of(raw)
        ids[k] = -1 if term is None else vocabulary.setdefault(term, len(vocabulary))
    terms = ids[batch.codes] if len(batch.codes) else np.zeros(0, np.int64)
    kept = terms >= 0
    return terms[kept], np.asarray(batch.doc_ids, np.int64)[kept]


class SegmentedBM25:
    """BM25 (or BM25F) over segments mapped onto one version's nodes (``doc_maps[s][j]``: the node of document
    ``j`` of segment ``s``, -1 when another segment holds it or the node is gone)."""

    def __init__(self, segments: list[Segment], doc_maps: list[I64], num_docs: int, k1: float, b: float,
                 tokenizer: Tokenizer, fields: BM25FFields | None) -> None:
        self.segments, self.doc_maps = segments, doc_maps
        self.k1, self.b, self.tokenizer, self.fields = float(k1), float(b), tokenizer, fields
        self._num_docs = num_docs
        n_fields = len(fields["names"]) if fields else 1
        lengths = np.zeros((n_fields, num_docs), np.int32)
        for segment, mapping in zip(segments, doc_maps, strict=True):
            keep = mapping >= 0
            lengths[:, mapping[keep]] = segment.field_lengths[:, keep]
        self.doc_lengths = lengths.sum(axis=0).astype(np.int32) if fields else lengths[0]
        self._avgdl = max(float(self.doc_lengths.mean()) if num_docs else 1.0, 1e-12)
        self._norms: list[F64] = []
        for f in range(n_fields if fields else 0):
            assert fields is not None
            avg = max(float(lengths[f].mean()), 1e-12) if num_docs else 1.0
            self._norms.append(1.0 - fields["b"][f] + fields["b"][f] * lengths[f] / avg)

    @property
    def num_docs(self) -> int:
        return self._num_docs

    def _term_postings(self, term: str) -> tuple[I64, F32]:
        """The version's documents holding ``term`` (unordered) and their raw frequencies (fields, postings)."""
        parts = []
        for segment, mapping in zip(self.segments, self.doc_maps, strict=True):
            docs, tf = segment.postings(term)
            nodes = mapping[docs]
            keep = nodes >= 0
            parts.append((nodes[keep], tf[:, keep]))
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts], axis=1)

    def _query_terms(self, query: str) -> list[tuple[I64, F32, int, int]]:
        """(documents, frequencies, document frequency, occurrences) of the query's terms the version holds, in
        order of first occurrence."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        counts: dict[str, int] = {}
        for term in self.tokenizer.tokenize(query):
            counts[term] = counts.get(term, 0) + 1
        out = []
        for term, count in counts.items():
            docs, tf = self._term_postings(term)
            if len(docs):
                out.append((docs, tf, len(docs), count))
        return out

    def _weights(self, docs: I64, tf: F32, df: int) -> F32:
        idf = np.log1p((self.num_docs - np.asarray([df], np.int64) + 0.5) / (np.asarray([df], np.int64) + 0.5))[0]
        if not self.fields:
            return bm25_weights(idf, tf[0], self.doc_lengths[docs], self.k1, self.b, self._avgdl)
        pseudo = np.zeros(len(docs), dtype=np.float64)
        for f, norm in enumerate(self._norms):
            pseudo += self.fields["weights"][f] * tf[f].astype(np.float64) / norm[docs]
        return bm25_weights(idf, pseudo.astype(np.float32), self.doc_lengths[docs], self.k1, 0.0, self._avgdl)

    def _named(self, query: str) -> I64:
        found = []
        for segment, mapping in zip(self.segments, self.doc_maps, strict=True):
            if segment.exact is not None:
                nodes = mapping[segment.exact.lookup(query)]
                found.append(nodes[nodes >= 0])
        return np.sort(np.concatenate(found)) if found else np.zeros(0, np.int64)

    def _scores(self, query: str) -> F32:
        """float32 score of every document: terms added in query order, then the exact-name boost (as BM25Index)."""
        scores = np.zeros(self.num_docs, dtype=np.float32)
        terms = self._query_terms(query)
        for docs, tf, df, count in terms:
            weights = self._weights(docs, tf, df)
            np.add.at(scores, docs, weights if count == 1 else weights * np.float32(count))
        named = self._named(query)
        if len(named):
            total = 0.0
            for _docs, _tf, df, count in terms:
                total += count * float(np.log1p((self.num_docs - df + 0.5) / (df + 0.5)))
            scores[named] += np.float32(max(total, 1.0))
        return scores

    def search(self, query: str, k: int, mask: Bools | None = None) -> tuple[I64, F32]:
        """Top-``k`` documents, descending, ties by lower id; only documents scoring > 0 (as BM25Index.search)."""
        scores = self._scores(query)
        if mask is not None:
            scores = scores * np.asarray(mask, dtype=bool)
        return top_k_dense(scores, k)

    def score(self, query: str, candidates: Ints | Sequence[int]) -> F32:
        cand = np.asarray(candidates)
        if cand.size == 0:
            return np.zeros(cand.shape, dtype=np.float32)
        if cand.min() < 0 or cand.max() >= self.num_docs:
            raise ValueError(f"candidates out of range: valid ids are 0..{self.num_docs - 1}")
        return self._scores(query)[cand.astype(np.int64)]

    def matched_terms(self, query: str, doc: int) -> list[str]:
        """Distinct query tokens (before stemming) whose term occurs in document ``doc``."""
        matched = []
        for raw in dict.fromkeys(self.tokenizer.surface_tokens(query)):
            term = self.tokenizer.term_of(raw)
            if term is not None and bool(np.any(self._term_postings(term)[0] == doc)):
                matched.append(raw)
        return matched

    def __repr__(self) -> str:
        return f"SegmentedBM25(num_docs={self.num_docs}, segments={len(self.segments)})"


def doc_maps(segments: list[Segment], ids: pa.Array | pa.ChunkedArray) -> list[I64]:
    """Each segment's documents on the version whose node ids are ``ids``: the newest segment holding a node wins.
    Raises ``ValueError`` when a node is in no segment (an index that does not cover the version)."""
    import pyarrow.compute as pc

    value_set = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    claimed = np.zeros(len(value_set), dtype=bool)
    maps: list[I64] = [np.zeros(0, np.int64)] * len(segments)
    for s in range(len(segments) - 1, -1, -1):
        found = pc.fill_null(pc.index_in(pa.array(segments[s].node_ids, pa.string()), value_set=value_set), -1)
        mapping = np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)
        live = mapping >= 0
        mapping[live & claimed[np.maximum(mapping, 0)]] = -1
        claimed[mapping[mapping >= 0]] = True
        maps[s] = mapping
    if not claimed.all():
        missing = np.flatnonzero(~claimed)[:5].tolist()
        raise ValueError(f"the index segments do not cover node(s) {[value_set[i].as_py() for i in missing]}")
    return maps
