"""A BM25 build's chunks: documents read in chunks bounded by their count and their text, their raw tokens looked
up in the vocabulary, and each split chunk counted into (document, term) or (term, document) pairs with term
frequencies (:mod:`ark.index.bm25_build` spills them as sorted runs and merges them)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import pyarrow as pa

from ark.arrays import F32, I32, I64, U64, Ints
from ark.index.optional_kernel import build_kernel
from ark.index.tokenizer import SplitBatch, Tokenizer

# A chunk also stops at this many characters per document of its size: splitting and counting hold about 150 bytes
# a token, so chunks are bounded by their text, not their number of documents (MAG's node documents, ~680 characters
# each, took 1.25 GB in 25,000-document chunks; the Zipf benchmark's, ~375 characters, stay whole).
CHUNK_BYTES_PER_DOC = 400


class _Vocabulary(dict):
    """Raw token -> term id (-1 for dropped tokens) of the raw tokens looked up as strings; filled lazily so each
    distinct token is analysed once. The short ASCII ones looked up by their packed integers are kept in
    :attr:`packed_keys` alone, and without a stemmer a kept raw token is its own term: :attr:`term_ids` (term -> id)
    answers it, and this dict holds only the dropped ones (a dict of the vocabulary's size less: ~50 bytes a term)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        super().__init__()
        self.tokenizer = tokenizer
        self.terms: list[str] = []
        self.term_ids: dict[str, int] = {}
        self.packed_keys = np.zeros(0, dtype="<u8")  # packed raw tokens seen (SplitBatch.packed), ascending
        self.packed_ids = np.zeros(0, dtype=np.int64)  # their term ids
        self.identity = type(tokenizer).term_of is Tokenizer.term_of and tokenizer.stemmer_language is None

    def __missing__(self, raw: str) -> int:
        tid = self._term_id(raw)
        if tid < 0 or not self.identity:
            self[raw] = tid
        return tid

    def _term_id(self, raw: str) -> int:
        """The term id of an unseen raw token (its term numbered next if new), -1 if it is dropped."""
        term = self.tokenizer.term_of(raw)
        if term is None:
            return -1
        tid = self.term_ids.get(term, -1)
        if tid < 0:
            tid = self.term_ids[term] = len(self.terms)
            self.terms.append(term)
        return tid

    def ids_of(self, raws: Sequence[str], packed: U64 | None = None, first_seen: I64 | None = None) -> I64:
        """Term ids (-1 if dropped) of distinct raw tokens, analysing only unseen tokens; ``raws[:len(packed)]``
        are looked up by their packed integers (a sorted numpy table: no string hashing), the others in the dict.
        Unseen tokens get ids in the order of ``first_seen`` (each raw token's first occurrence in document
        order, :func:`_first_seen`), else in ``raws`` order: a term's id is then the rank of its first occurrence
        in the corpus, whatever the chunks (so the files do not depend on the memory budget)."""
        ids = np.full(len(raws), -2, dtype=np.int64)
        packed = np.zeros(0, dtype="<u8") if packed is None else packed
        n_packed = len(packed)
        if n_packed and len(self.packed_keys):
            at = np.minimum(np.searchsorted(self.packed_keys, packed), len(self.packed_keys) - 1)
            known = self.packed_keys[at] == packed
            ids[:n_packed][known] = self.packed_ids[at[known]]
        # dict.get through map runs in C (~0.1 us a token); subscripting this subclass costs ~10x more.
        known = self.term_ids.get if self.identity else self.get  # identity: a miss may be a dropped token
        ids[n_packed:] = np.fromiter(map(known, raws[n_packed:], itertools.repeat(-2)), np.int64,
                                     len(raws) - n_packed)
        unseen = np.flatnonzero(ids == -2)
        if first_seen is not None and len(unseen) > 1:
            unseen = unseen[np.argsort(first_seen[unseen], kind="stable")]
        for pos in unseen.tolist():
            ids[pos] = self._term_id(raws[pos]) if pos < n_packed else self[raws[pos]]
        if len(new := np.sort(unseen[unseen < n_packed])):
            keys = packed[new]
            order = np.argsort(keys)
            at = np.searchsorted(self.packed_keys, keys[order])
            self.packed_keys = np.insert(self.packed_keys, at, keys[order])
            self.packed_ids = np.insert(self.packed_ids, at, ids[new][order])
        return ids


def _chunks(docs: Iterable[str] | pa.Array | pa.ChunkedArray, size: int,
            chars: int | None = None) -> Iterator[list[str] | pa.ChunkedArray]:
    """Consecutive chunks of at most ``size`` documents and ``chars`` characters (default and at most
    :data:`CHUNK_BYTES_PER_DOC` ``* size``; at least one document): a chunk's memory follows its tokens, so long
    documents make shorter chunks."""
    budget = size * CHUNK_BYTES_PER_DOC if chars is None else min(chars, size * CHUNK_BYTES_PER_DOC)
    if isinstance(docs, pa.Array | pa.ChunkedArray):  # Arrow text: zero-copy slices, no Python string per document
        import pyarrow.compute as pc

        if isinstance(docs, pa.Array):
            docs = pa.chunked_array([docs])
        start = 0
        while start < len(docs):
            window = docs.slice(start, size)
            lengths = pc.fill_null(pc.binary_length(window), 0).to_numpy()
            count = _fitting(lengths, budget)
            yield window.slice(0, count)
            start += count
        return
    it = iter(docs)
    pending: list = []
    while chunk := pending + list(itertools.islice(it, size - len(pending))):
        if not set(map(type, chunk)) <= {str}:  # one C pass; a str subclass is copied to a plain equal str
            chunk = [d if isinstance(d, str) else ("" if d is None else str(d)) for d in chunk]
        count = _fitting(np.fromiter(map(len, chunk), np.int64, len(chunk)), budget)
        chunk, pending = chunk[:count], chunk[count:]
        yield chunk


def _fitting(lengths: I64, budget: int) -> int:
    """How many of the first documents fit ``budget`` characters together (at least one)."""
    return max(int(np.searchsorted(np.cumsum(lengths), budget, side="right")), 1)


def _chunks_of_records(docs: Iterable[Sequence[str]], size: int, n_fields: int,
                       chars: int | None = None) -> Iterator[list[list[str]]]:
    """Chunks of field records, each a list of ``n_fields`` strings (``None`` becomes empty), bounded as
    :func:`_chunks`."""
    budget = size * CHUNK_BYTES_PER_DOC if chars is None else min(chars, size * CHUNK_BYTES_PER_DOC)
    it = iter(docs)
    pending: list[list[str]] = []
    while chunk := pending + list(itertools.islice(it, size - len(pending))):
        records = pending
        for record in chunk[len(pending):]:
            if isinstance(record, str) or len(record) != n_fields:
                raise ValueError(f"each document needs {n_fields} fields, got {record!r:.200}")
            records.append([f if isinstance(f, str) else ("" if f is None else str(f)) for f in record])
        lengths = np.fromiter((sum(map(len, record)) for record in records), np.int64, len(records))
        count = _fitting(lengths, budget)
        records, pending = records[:count], records[count:]
        yield records


@dataclass
class _ChunkCounts:
    """Distinct (document, term) pairs of one chunk in document-major order, with term frequencies."""

    row_counts: Ints  # distinct terms per document
    terms: I32  # term id per pair, ascending within a document
    tf: F32  # term frequency per pair
    lengths: I32  # document length in kept tokens


def _chunk_term_counts(batch: SplitBatch, term_ids: I64, width: int) -> _ChunkCounts:
    """Count one split chunk, given the term id of each raw token of its dictionary (``-1``: dropped) and an upper
    bound on the term ids: scipy sums the repeated (document, term) pairs.

    scipy's COO -> CSR conversion sorts each document's terms separately (short rows) and adds duplicates in C++,
    about 1.3x faster than one global sort of int64 (document, term) keys, with the same result."""
    import scipy.sparse as sp  # building only: loading and searching need numpy alone (start-up)

    n = batch.num_texts
    terms = term_ids[batch.codes]
    kept = terms >= 0
    terms, docs = terms[kept].astype(np.int32), batch.doc_ids[kept]
    lengths = np.bincount(docs, minlength=n).astype(np.int32)
    counts = sp.csr_matrix((np.ones(len(terms), dtype=np.float32), (docs, terms)), shape=(n, max(width, 1)))
    counts.sum_duplicates()  # canonical: terms ascending within each document, tf summed
    return _ChunkCounts(np.diff(counts.indptr), counts.indices.astype(np.int32, copy=False), counts.data, lengths)


def _fielded_counts(counts: _ChunkCounts, n: int, n_fields: int, width: int) -> tuple[_ChunkCounts, I32]:
    """One chunk's per-field counts (virtual document ``f * n + i`` = field ``f`` of document ``i``) as distinct
    (document, term) pairs, document-major, with each field's frequency (``(n_fields, pairs)`` float32)."""
    virtual = np.repeat(np.arange(n * n_fields, dtype=np.int64), counts.row_counts)
    width = max(width, 1)
    keys = (virtual % n) * width + counts.terms
    unique, inverse = np.unique(keys, return_inverse=True)
    per_field = np.zeros((n_fields, len(unique)), dtype=np.float32)
    per_field[virtual // n, inverse] = counts.tf
    docs = unique // width
    lengths = counts.lengths.reshape(n_fields, n)
    return _ChunkCounts(np.bincount(docs, minlength=n), (unique - docs * width).astype(np.int32), per_field,
                        lengths.sum(axis=0).astype(np.int32)), lengths


@dataclass
class TermMajor:
    """Distinct (term, document) pairs of one chunk in term-major order, documents ascending within a term."""

    ptr: I64  # each term id's first pair (one more than the term ids counted)
    docs: Ints  # document ids within the chunk
    tf: F32  # (n_fields, pairs) frequencies
    lengths: I32  # document length in kept tokens


def _term_major_counts(batch: SplitBatch, term_ids: I64, width: int) -> TermMajor:
    """Count one split chunk straight into term-major order (plain BM25): the tokens, in document order, as a
    sparse row per document; scipy's CSR -> CSC counting sort (stable) puts each term's tokens in document order,
    so a document's repeats of a term are adjacent and their count is the gap between distinct neighbours. The
    same pairs as :func:`_chunk_term_counts` turned term-major, without sorting each document's terms first."""
    n = batch.num_texts
    in_order = len(batch.doc_ids) < 2 or not bool((batch.doc_ids[1:] < batch.doc_ids[:-1]).any())
    if in_order and (kernel := _count_kernel()) is not None:
        ptr, docs, tf, lengths = kernel.term_major(term_ids, batch.codes, batch.doc_ids, n, max(width, 1))
        return TermMajor(ptr, docs, tf[None, :], lengths)
    import scipy.sparse as sp  # building only: loading and searching need numpy alone (start-up)

    terms = term_ids[batch.codes]
    kept = terms >= 0
    terms, docs = terms[kept].astype(np.int32), batch.doc_ids[kept]
    if not in_order:  # non-ASCII texts' tokens come after the others
        order = np.argsort(docs, kind="stable")
        terms, docs = terms[order], docs[order]
    lengths = np.bincount(docs, minlength=n).astype(np.int32)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    ones = np.ones(len(terms), dtype=np.float32)
    tokens = sp.csr_matrix((ones, terms, indptr), shape=(n, max(width, 1))).tocsc()  # no duplicates summed
    by_doc, ptr = tokens.indices, tokens.indptr.astype(np.int64, copy=False)
    distinct = np.ones(len(by_doc), dtype=bool)
    np.not_equal(by_doc[1:], by_doc[:-1], out=distinct[1:])
    distinct[ptr[:-1][ptr[:-1] < len(by_doc)]] = True  # each term's first token
    starts = np.flatnonzero(distinct)
    tf = np.diff(np.append(starts, len(by_doc))).astype(np.float32)
    seen = np.zeros(len(by_doc) + 1, dtype=np.int64)
    np.cumsum(distinct, out=seen[1:])
    return TermMajor(seen[ptr], by_doc[starts], tf[None, :], lengths)


def _count_kernel() -> ModuleType | None:
    """The compiled counting sort (:mod:`ark.index._count_kernel`), or None without numba."""
    return build_kernel("_count_kernel")
