"""Lucene-style BM25 over a document collection: global top-k and scoring of a candidate subset.

Storage is a term-major (CSC) matrix of precomputed per-posting BM25 weights (float32): for term ``t``,
``indices[indptr[t]:indptr[t+1]]`` are the ids of the documents containing it, ascending, and ``weights`` the
matching ``idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` (bm25s's "lucene" method). A query's score is
then a sum of a few posting slices; scoring a candidate subset binary-searches the candidates in each query
term's (sorted) postings, so ranking 20 neighbours never touches the rest of the corpus.

Field-aware scoring (:meth:`BM25Index.build_fielded`) is BM25F (Robertson, Zaragoza and Taylor, 2004): each
document has several fields (e.g. its names and its description); a term's pseudo frequency is the weighted sum
of its per-field frequencies, each normalised by that field's length, ``tf~ = sum_f w_f * tf_f / (1 - b_f + b_f *
len_f / avglen_f)``, and the posting weight is ``idf(t) * tf~ / (tf~ + k1)``. With one field of weight 1 this is
exactly the plain formula above, so both share the storage, :meth:`search` and :meth:`score`. An optional
:class:`~ark.index.exact.ExactNames` table adds, for the nodes one of whose names equals the whole query, a boost
of ``sum of the query terms' idf`` (at least 1): an upper bound of any document's BM25 score for that query, so an
exactly named node always ranks above nodes that merely share the query's words.

Hand-written on numpy/scipy rather than calling bm25s at runtime because bm25s keeps the whole tokenized corpus
as Python lists while building (gigabytes at STaRK scale), has no subset scoring and no BM25F; bm25s is the test
oracle of plain BM25, and a direct transcription of the BM25F formula is the oracle of the fielded build.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from ark.arrays import sorted_unique
from ark.index._progress import progress_bar
from ark.index.exact import ExactNames
from ark.index.terms import TERMS_FILE, TermTable, save_table
from ark.index.tokenizer import SplitBatch, Tokenizer
from ark.index.topk import EMPTY_IDS, EMPTY_SCORES, top_k, top_k_dense
from ark.storage.atomic import atomic_directory
from ark.storage.cache_folder import rebuild_hint
from ark.storage.checksums import DamagedFileError

FORMAT_VERSION = 1
# score() adds whole postings into a per-document array once the candidates are at least 1/16 of the corpus:
# cheaper than binary searches from there on (a 280k-neighbour hub of a 1.9M-node graph: 7 ms -> 2 ms).
DENSE_SCORING_FRACTION = 16
# search() ranks only the documents holding a query term when their postings total at most 1/32 of the corpus.
SPARSE_SEARCH_FRACTION = 32
_ARRAYS = ("indptr", "indices", "weights", "doc_lengths")


class _Vocabulary(dict):
    """Raw token -> term id (-1 for dropped tokens); filled lazily so each distinct token is analysed once."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        super().__init__()
        self.tokenizer = tokenizer
        self.terms: list[str] = []
        self.term_ids: dict[str, int] = {}

    def __missing__(self, raw: str) -> int:
        term = self.tokenizer.term_of(raw)
        if term is None:
            tid = -1
        else:
            tid = self.term_ids.get(term, -1)
            if tid < 0:
                tid = self.term_ids[term] = len(self.terms)
                self.terms.append(term)
        self[raw] = tid
        return tid

    def ids_of(self, raws: list[str]) -> np.ndarray:
        """Term ids (-1 if dropped) of distinct raw tokens: plain dict lookups, analysing only unseen tokens."""
        # dict.get through map runs in C (~0.1 us a token); subscripting this subclass costs ~10x more.
        ids = np.fromiter(map(self.get, raws, itertools.repeat(-2)), np.int64, len(raws))
        for pos in np.flatnonzero(ids == -2).tolist():
            ids[pos] = self[raws[pos]]
        return ids


def _chunks(docs: Iterable[str] | pa.Array | pa.ChunkedArray, size: int) -> Iterator[list[str] | pa.ChunkedArray]:
    if isinstance(docs, pa.Array | pa.ChunkedArray):  # Arrow text: zero-copy slices, no Python string per document
        if isinstance(docs, pa.Array):
            docs = pa.chunked_array([docs])
        for start in range(0, len(docs), size):
            yield docs.slice(start, size)
        return
    it = iter(docs)
    while chunk := list(itertools.islice(it, size)):
        if not all(isinstance(d, str) for d in chunk):
            chunk = [d if isinstance(d, str) else ("" if d is None else str(d)) for d in chunk]
        yield chunk


def _chunks_of_records(docs: Iterable[Sequence[str]], size: int, n_fields: int) -> Iterator[list[list[str]]]:
    """Chunks of field records, each a list of ``n_fields`` strings (``None`` becomes empty)."""
    it = iter(docs)
    while chunk := list(itertools.islice(it, size)):
        records = []
        for record in chunk:
            if isinstance(record, str) or len(record) != n_fields:
                raise ValueError(f"each document needs {n_fields} fields, got {record!r:.200}")
            records.append([f if isinstance(f, str) else ("" if f is None else str(f)) for f in record])
        yield records


def _merge_fields(counts: _ChunkCounts, n: int, n_fields: int, weights: Sequence[float], norms: list[np.ndarray],
                  width: int) -> _ChunkCounts:
    """One chunk's per-field counts (virtual document ``f * n + i`` = field ``f`` of document ``i``) merged into
    BM25F pseudo frequencies ``sum_f w_f * tf_f / norm_f`` per (document, term), document-major."""
    virtual = np.repeat(np.arange(n * n_fields, dtype=np.int64), counts.row_counts)
    field_weight = np.repeat(np.asarray(weights, dtype=np.float64), n)[virtual]
    contribution = field_weight * counts.tf / np.concatenate(norms)[virtual]
    keys = (virtual % n) * max(width, 1) + counts.terms
    unique, inverse = np.unique(keys, return_inverse=True)
    pseudo = np.bincount(inverse, weights=contribution, minlength=len(unique))
    docs = unique // max(width, 1)
    return _ChunkCounts(np.bincount(docs, minlength=n), (unique - docs * max(width, 1)).astype(np.int32),
                        pseudo.astype(np.float32), counts.lengths.reshape(n_fields, n).sum(axis=0).astype(np.int32))


def _split_ahead(tokenizer: Tokenizer, chunks: Iterator[list[str]], workers: int = 2) -> Iterator[SplitBatch]:
    """Split chunks in worker threads, keeping ``workers`` chunks in flight, yielding results in order.

    Arrow's kernels and most of numpy release the GIL, so splitting the next chunk overlaps with counting the
    current one.
    """
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque = deque()
        for chunk in chunks:
            pending.append(pool.submit(tokenizer.split, chunk))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


@dataclass
class _ChunkCounts:
    """Distinct (document, term) pairs of one chunk in document-major order, with term frequencies."""

    row_counts: np.ndarray  # distinct terms per document
    terms: np.ndarray  # int32 term id per pair, ascending within a document
    tf: np.ndarray  # float32 term frequency per pair
    lengths: np.ndarray  # int32 document length in kept tokens


def _chunk_term_counts(batch: SplitBatch, vocab: _Vocabulary) -> _ChunkCounts:
    """Count one split chunk: map raw tokens to terms, then let scipy sum the repeated (document, term) pairs.

    scipy's COO -> CSR conversion sorts each document's terms separately (short rows) and adds duplicates in C++,
    about 1.3x faster than one global sort of int64 (document, term) keys, with the same result."""
    import scipy.sparse as sp  # building only: loading and searching need numpy alone (start-up)

    n = batch.num_texts
    # One Python lookup per distinct raw token of the chunk, none per token.
    terms = vocab.ids_of(batch.dictionary)[batch.codes]
    kept = terms >= 0
    terms, docs = terms[kept].astype(np.int32), batch.doc_ids[kept]
    lengths = np.bincount(docs, minlength=n).astype(np.int32)
    counts = sp.csr_matrix((np.ones(len(terms), dtype=np.float32), (docs, terms)), shape=(n, max(len(vocab.terms), 1)))
    counts.sum_duplicates()  # canonical: terms ascending within each document, tf summed
    return _ChunkCounts(np.diff(counts.indptr), counts.indices.astype(np.int32, copy=False), counts.data, lengths)


def _load_array(path: Path, mmap: bool) -> np.ndarray:
    try:
        try:
            return np.load(path, mmap_mode="r" if mmap else None)
        except ValueError:  # an empty array cannot be memory-mapped
            return np.load(path)
    except (OSError, ValueError, EOFError) as exc:  # missing or truncated ("mmap length is greater than file size")
        raise DamagedFileError(path, f"unreadable: {exc}", rebuild_hint(path.parent)) from exc


class BM25Index:
    """BM25 index with global top-k :meth:`search` and subset :meth:`score` sharing one global IDF."""

    def __init__(
        self,
        indptr: np.ndarray,
        indices: np.ndarray,
        weights: np.ndarray,
        doc_lengths: np.ndarray,
        terms: Sequence[str],
        k1: float,
        b: float,
        tokenizer: Tokenizer,
        fields: dict | None = None,
        exact: ExactNames | None = None,
    ) -> None:
        """``terms``: the vocabulary by term id, a list or a saved index's :class:`~ark.index.terms.TermTable`
        (which also answers the term -> id lookups)."""
        self.indptr = indptr
        self.indices = indices
        self.weights = weights
        self.doc_lengths = doc_lengths
        self.terms = terms
        self.k1 = float(k1)
        self.b = float(b)
        self.tokenizer = tokenizer
        self.fields = fields  # BM25F: {"names": [...], "weights": [...], "b": [...]}; None for plain BM25
        self.exact = exact
        self._term_ids: TermTable | dict[str, int] = (
            terms if isinstance(terms, TermTable) else dict(zip(terms, range(len(terms)), strict=True)))

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        docs: Iterable[str],
        k1: float = 1.5,
        b: float = 0.75,
        tokenizer: Tokenizer | None = None,
        num_docs: int | None = None,
        progress: bool = False,
        chunk_size: int = 50_000,
    ) -> BM25Index:
        """Index ``docs`` (streamed in chunks; document ``i`` gets id ``i``): strings, or an Arrow string array
        (e.g. a graph's text column; nulls are empty documents), which is tokenized without Python strings.

        ``num_docs`` only sizes the progress bar. Memory stays near the size of the final postings: no
        per-token Python objects are kept, only a few chunks of text at a time. Each chunk is tokenized and
        counted in vectorised passes; 50k documents (~2.5M tokens) keeps the per-chunk arrays small enough
        to be recycled by the allocator instead of freshly page-faulted, which measured fastest.
        """
        if not (k1 >= 0):
            raise ValueError(f"k1 must be >= 0, got {k1!r}")
        if not (0 <= b <= 1):
            raise ValueError(f"b must be in [0, 1], got {b!r}")
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size!r}")
        tokenizer = tokenizer or Tokenizer()
        vocab = _Vocabulary(tokenizer)
        pieces: list[_ChunkCounts] = []
        with progress_bar("BM25 indexing", num_docs, progress) as bar:
            for batch in _split_ahead(tokenizer, _chunks(docs, chunk_size)):
                pieces.append(_chunk_term_counts(batch, vocab))
                bar.advance(batch.num_texts)
        return cls._from_pieces(pieces, vocab.terms, k1, b, tokenizer)

    @classmethod
    def build_fielded(
        cls,
        docs: Iterable[Sequence[str]],
        field_names: Sequence[str],
        weights: Sequence[float],
        b: Sequence[float],
        k1: float = 1.5,
        tokenizer: Tokenizer | None = None,
        exact: ExactNames | None = None,
        num_docs: int | None = None,
        progress: bool = False,
        chunk_size: int = 25_000,
    ) -> BM25Index:
        """BM25F over documents made of fields: ``docs[i][f]`` is field ``f`` of document ``i`` (see the module doc).

        ``weights[f]`` and ``b[f]`` are each field's weight and length normalisation. Each chunk's fields are split
        as one batch of ``n * F`` "virtual documents" (field-major), counted with the plain build's code, and merged
        into one pseudo term frequency per (document, term).
        """
        n_fields = len(field_names)
        if not (len(weights) == len(b) == n_fields and n_fields):
            raise ValueError(f"need one weight and one b per field: fields {list(field_names)}, weights "
                             f"{list(weights)}, b {list(b)}")
        if not (k1 >= 0):
            raise ValueError(f"k1 must be >= 0, got {k1!r}")
        if any(not (0 <= x <= 1) for x in b) or any(not (w >= 0) for w in weights):
            raise ValueError(f"field b must be in [0, 1] and weights >= 0, got b {list(b)}, weights {list(weights)}")
        tokenizer = tokenizer or Tokenizer()
        vocab = _Vocabulary(tokenizer)
        counted: list[tuple[int, _ChunkCounts]] = []
        sizes: list[int] = []

        def flattened() -> Iterator[list[str]]:
            for chunk in _chunks_of_records(docs, chunk_size, n_fields):
                sizes.append(len(chunk))
                yield [chunk[i][f] for f in range(n_fields) for i in range(len(chunk))]

        with progress_bar("BM25F indexing", num_docs, progress) as bar:
            for batch in _split_ahead(tokenizer, flattened()):
                n = batch.num_texts // n_fields
                counted.append((n, _chunk_term_counts(batch, vocab)))
                bar.advance(n)
        lengths = [np.concatenate([c.lengths.reshape(n_fields, n)[f] for n, c in counted]) if counted
                   else np.zeros(0, np.int32) for f in range(n_fields)]
        avg = [max(float(length.mean()), 1e-12) if len(length) else 1.0 for length in lengths]
        pieces, start = [], 0
        counted.reverse()
        while counted:
            n, counts = counted.pop()
            norms = [1.0 - b[f] + b[f] * lengths[f][start: start + n] / avg[f] for f in range(n_fields)]
            pieces.append(_merge_fields(counts, n, n_fields, weights, norms, len(vocab.terms)))
            start += n
        del counted
        fields = {"names": list(field_names), "weights": [float(w) for w in weights], "b": [float(x) for x in b]}
        index = cls._from_pieces(pieces, vocab.terms, k1, 0.0, tokenizer, fielded=True)
        index.fields = fields
        index.exact = exact
        return index

    @classmethod
    def _from_pieces(
        cls, pieces: list[_ChunkCounts], terms: list[str], k1: float, b: float, tokenizer: Tokenizer,
        fielded: bool = False,
    ) -> BM25Index:
        doc_lengths = np.concatenate([p.lengths for p in pieces]) if pieces else np.zeros(0, np.int32)
        n_docs, n_terms = len(doc_lengths), len(terms)
        df = np.zeros(n_terms, dtype=np.int64)
        for piece in pieces:
            df += np.bincount(piece.terms, minlength=n_terms)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        if fielded:  # the pieces hold length-normalised pseudo frequencies: the saturation constant is k1 alone
            norm = np.full(n_docs, float(k1))
        else:
            avgdl = float(doc_lengths.mean()) if n_docs else 1.0
            norm = k1 * (1.0 - b + b * doc_lengths / max(avgdl, 1e-12))

        row_counts = np.concatenate([p.row_counts for p in pieces]) if pieces else np.zeros(0, np.int64)
        nnz = int(row_counts.sum())
        index_dtype = np.int32 if max(nnz, n_docs, n_terms) < 2**31 else np.int64  # scipy keeps int32 then
        indptr = np.zeros(n_docs + 1, dtype=index_dtype)
        np.cumsum(row_counts, out=indptr[1:])
        indices = np.empty(nnz, dtype=index_dtype)
        weights = np.empty(nnz, dtype=np.float32)
        # Turn tf into BM25 weights chunk by chunk (bounded float64 temporaries), freeing each chunk once copied.
        doc, pos = 0, 0
        pieces.reverse()  # in place: the caller's list must not keep the chunks alive
        while pieces:
            piece = pieces.pop()
            n, m = len(piece.lengths), len(piece.terms)
            rows = np.repeat(norm[doc : doc + n], piece.row_counts)
            tf = piece.tf.astype(np.float64)
            weights[pos : pos + m] = idf[piece.terms] * tf / (tf + rows)
            indices[pos : pos + m] = piece.terms
            doc, pos = doc + n, pos + m
            del piece, rows, tf
        import scipy.sparse as sp  # building only: loading and searching need numpy alone (start-up)

        doc_major = sp.csr_matrix((weights, indices, indptr), shape=(n_docs, n_terms), copy=False)
        del weights, indices, indptr
        # csr -> csc is a linear counting sort in scipy; it emits each column's rows in ascending order.
        term_major = doc_major.tocsc()
        del doc_major
        return cls(
            term_major.indptr.astype(np.int64),
            term_major.indices.astype(np.int32, copy=False),
            term_major.data.astype(np.float32, copy=False),
            doc_lengths,
            terms,
            k1,
            b,
            tokenizer,
        )

    # ------------------------------------------------------------------ properties
    @property
    def num_docs(self) -> int:
        return len(self.doc_lengths)

    @property
    def vocabulary_size(self) -> int:
        return len(self.terms)

    def _query_terms(self, query: str) -> list[tuple[int, int]]:
        """Known query terms as (term id, occurrences), in order of first occurrence."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        counts: dict[int, int] = {}
        for term in self.tokenizer.tokenize(query):
            tid = self._term_ids.get(term)
            if tid is not None:
                counts[tid] = counts.get(tid, 0) + 1
        return list(counts.items())

    def _exactly_named(self, query: str) -> np.ndarray:
        """Documents one of whose names equals the whole query (empty without an exact-names table)."""
        return self.exact.lookup(query) if self.exact is not None else np.zeros(0, dtype=np.int64)

    def _exact_boost(self, terms: list[tuple[int, int]]) -> np.float32:
        """``sum of count * idf`` over the query terms (at least 1): no document's BM25 score can reach it."""
        n = self.num_docs
        total = 0.0
        for tid, count in terms:
            df = int(self.indptr[tid + 1] - self.indptr[tid])
            total += count * float(np.log1p((n - df + 0.5) / (df + 0.5)))
        return np.float32(max(total, 1.0))

    def _postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = int(self.indptr[tid]), int(self.indptr[tid + 1])
        return self.indices[lo:hi], self.weights[lo:hi]

    # ------------------------------------------------------------------ queries
    def search(self, query: str, k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` documents by BM25, descending (ties by lower id); only documents scoring > 0.

        ``mask`` (bool, one per document) restricts the result to documents where it is True.
        """
        if mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != np.bool_ or mask.shape != (self.num_docs,):
                raise ValueError(
                    f"mask must be a bool array of shape ({self.num_docs},), got {mask.dtype} {mask.shape}"
                )
        terms = self._query_terms(query)
        named = self._exactly_named(query)
        if k <= 0 or (not terms and not len(named)):
            return EMPTY_IDS, EMPTY_SCORES
        scores = np.zeros(self.num_docs, dtype=np.float32)
        touched = []
        for tid, count in terms:
            docs, weights = self._postings(tid)
            np.add.at(scores, docs, weights if count == 1 else weights * np.float32(count))  # 3x faster than +=
            touched.append(docs)
        if len(named):
            scores[named] += self._exact_boost(terms)
            touched.append(np.asarray(named, dtype=np.int64))
        if sum(map(len, touched)) * SPARSE_SEARCH_FRACTION <= self.num_docs:
            # Few documents contain a query term (a name, rare words): rank just those, no pass over every score.
            ids = sorted_unique(np.concatenate(touched)).astype(np.int64)
            if mask is not None:
                ids = ids[mask[ids]]
            ids = ids[scores[ids] > 0]
            return top_k(ids, scores[ids], k)
        if mask is not None:
            scores *= mask
        return top_k_dense(scores, k)

    def score(self, query: str, candidates: np.ndarray | Sequence[int]) -> np.ndarray:
        """BM25 scores of just ``candidates`` (same order; 0 where nothing matches), with the global IDF."""
        cand = np.asarray(candidates)
        if cand.size == 0:
            return np.zeros(cand.shape, dtype=np.float32)
        if not np.issubdtype(cand.dtype, np.integer):
            raise ValueError(f"candidates must be integer node ids, got dtype {cand.dtype}")
        cand = cand.astype(np.int64, copy=False)
        lo, hi = int(cand.min()), int(cand.max())
        if lo < 0 or hi >= self.num_docs:
            bad = lo if lo < 0 else hi
            raise ValueError(f"candidate {bad} is out of range: valid ids are 0..{self.num_docs - 1}")
        if len(cand) * DENSE_SCORING_FRACTION >= self.num_docs:
            return self._score_dense(query, cand)
        # Work on the sorted distinct candidates: numpy's searchsorted is much faster with sorted keys, and each
        # term's postings are sorted too, so the shorter side is binary-searched in the longer one.
        unique, inverse = np.unique(cand.ravel(), return_inverse=True)
        acc = np.zeros(len(unique), dtype=np.float32)
        for tid, count in self._query_terms(query):
            docs, weights = self._postings(tid)
            if len(docs) == 0:
                continue
            if len(docs) >= len(unique):
                pos = np.searchsorted(docs, unique)
                np.minimum(pos, len(docs) - 1, out=pos)
                hit = docs[pos] == unique
                where, found = hit, weights[pos[hit]]
            else:
                pos = np.searchsorted(unique, docs)
                np.minimum(pos, len(unique) - 1, out=pos)
                hit = unique[pos] == docs
                where, found = pos[hit], weights[hit]
            acc[where] += found if count == 1 else found * np.float32(count)
        named = self._exactly_named(query)
        if len(named):
            acc[np.isin(unique, named)] += self._exact_boost(self._query_terms(query))
        out = acc[inverse]
        return out.reshape(cand.shape)

    def _score_dense(self, query: str, cand: np.ndarray) -> np.ndarray:
        """:meth:`score` for a large candidate set (a hub's neighbours): each query term's postings are added into
        one score per document, then the candidates are read off. Linear in the postings and the candidates, with
        no sort; the float32 sums are added in the same order as the subset path, so the scores are identical."""
        dense = np.zeros(self.num_docs, dtype=np.float32)
        terms = self._query_terms(query)
        for tid, count in terms:
            docs, weights = self._postings(tid)
            np.add.at(dense, docs, weights if count == 1 else weights * np.float32(count))
        named = self._exactly_named(query)
        if len(named):
            dense[named] += self._exact_boost(terms)  # as the subset path: the same scores either way
        return dense[cand.ravel()].reshape(cand.shape)

    def matched_terms(self, query: str, doc: int) -> list[str]:
        """Distinct query tokens (lowercased, before stemming) whose term occurs in document ``doc``."""
        if not 0 <= doc < self.num_docs:
            raise ValueError(f"doc {doc} is out of range: valid ids are 0..{self.num_docs - 1}")
        matched: list[str] = []
        for raw in dict.fromkeys(self.tokenizer.surface_tokens(query)):
            tid = self._term_ids.get(self.tokenizer.term_of(raw))  # type: ignore[arg-type]
            if tid is None:
                continue
            docs, _ = self._postings(tid)
            pos = int(np.searchsorted(docs, doc))
            if pos < len(docs) and docs[pos] == doc:
                matched.append(raw)
        return matched

    # ------------------------------------------------------------------ persistence
    def settings(self) -> dict:
        """Everything that determines the index contents apart from the documents."""
        settings = {"format": FORMAT_VERSION, "k1": self.k1, "b": self.b, "tokenizer": self.tokenizer.config()}
        if self.fields is not None:
            settings["fields"] = self.fields
        return settings

    def save(self, directory: str | Path) -> None:
        """Write the index to ``directory`` atomically (complete or not at all)."""
        with atomic_directory(directory) as tmp:
            for name in _ARRAYS:
                np.save(tmp / f"{name}.npy", np.ascontiguousarray(getattr(self, name)))
            (tmp / TERMS_FILE).write_text("\n".join(self.terms), encoding="utf-8")
            save_table(tmp, self.terms)
            if self.exact is not None:
                self.exact.save(tmp)
            meta = {**self.settings(), "num_docs": self.num_docs, "num_terms": self.vocabulary_size}
            (tmp / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path, mmap: bool = True) -> BM25Index:
        """Open an index written by :meth:`save`; arrays are memory-mapped unless ``mmap=False``."""
        directory = Path(directory)
        meta_path = directory / "meta.json"
        if not meta_path.is_file():
            raise FileNotFoundError(f"no BM25 index at {directory} (missing meta.json)")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"index at {directory} has format {meta.get('format')!r}, expected {FORMAT_VERSION}")
        arrays = {name: _load_array(directory / f"{name}.npy", mmap) for name in _ARRAYS}
        terms: Sequence[str] | None = TermTable.load(directory, meta["num_terms"], mmap)
        if terms is None:  # saved before the table existed: read the list, and save the table for next time
            text = (directory / TERMS_FILE).read_text(encoding="utf-8")
            terms = text.split("\n") if meta["num_terms"] else []
            with contextlib.suppress(OSError):  # a read-only index folder stays as it is
                save_table(directory, terms)
        return cls(
            **arrays, terms=terms, k1=meta["k1"], b=meta["b"], tokenizer=Tokenizer.from_config(meta["tokenizer"]),
            fields=meta.get("fields"), exact=ExactNames.load(directory, mmap=mmap),
        )

    def __repr__(self) -> str:
        kind = f", fields={self.fields['names']}" if self.fields else ""
        return f"BM25Index(num_docs={self.num_docs}, terms={self.vocabulary_size}, k1={self.k1}, b={self.b}{kind})"
