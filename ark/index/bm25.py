"""Lucene-style BM25 over a document collection: global top-k and scoring of a candidate subset.

Postings are term-major and compressed (:mod:`ark.index.postings`: document-id deltas, term frequencies, block
bounds), memory-mapped once saved. The weight of a posting is bm25s's "lucene" ``idf(t) * tf / (tf + k1 * (1 - b
+ b * dl / avgdl))``, computed as a query reads it; a query's score is the float32 sum of its terms' weights in
query order. Scoring a candidate subset binary-searches the candidates in each query term's decoded postings, so
ranking 20 neighbours never touches the rest of the corpus. Global top-k on a large index (at least
:data:`PRUNE_MIN_DOCS` documents, with numba installed) uses exact dynamic pruning (:mod:`ark.index.bm25_prune`);
otherwise, and as its oracle, every matching posting is added into one score per document. A long query (at least
:data:`LONG_QUERY_TERMS` distinct terms) on a large index is that exhaustive pass compiled, term at a time: walking
many terms document at a time costs more than streaming their postings once; so is a query of only frequent terms on
an index of up to :data:`ACCUMULATE_MAX_DOCS` documents.

Field-aware scoring (:meth:`BM25Index.build_fielded`) is BM25F (Robertson, Zaragoza and Taylor, 2004): each
document has several fields (e.g. its names and its description); a term's pseudo frequency is the weighted sum
of its per-field frequencies, each normalised by that field's length, ``tf~ = sum_f w_f * tf_f / (1 - b_f + b_f *
len_f / avglen_f)``, and the posting weight is ``idf(t) * tf~ / (tf~ + k1)`` (the plain formula with ``b = 0``), so
both share the storage, :meth:`search` and :meth:`score`. An optional :class:`~ark.index.exact.ExactNames` table
adds, for the nodes one of whose names equals the whole query, a boost of ``sum of the query terms' idf`` (at least
1): an upper bound of any document's BM25 score for that query, so an exactly named node always ranks above nodes
that merely share the query's words.

Building (:mod:`ark.index.bm25_build`) spills sorted runs to disk and merges them, so its memory is bounded by the
chunk size. Hand-written on numpy rather than calling bm25s at runtime because bm25s keeps the whole tokenized
corpus as Python lists while building (gigabytes at STaRK scale), has no subset scoring, no BM25F and no pruning;
bm25s is the test oracle of plain BM25, and a direct transcription of the BM25F formula is the oracle of the
fielded build.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ark.arrays import F32, F64, I32, I64, U8, Bools, Ints, sorted_unique
from ark.index import bm25_prune
from ark.index.bm25_build import BuildDirectory, SortedRuns, build_budget, count_chunks, count_fielded_chunks
from ark.index.exact import ExactNames
from ark.index.optional_kernel import required_kernel
from ark.index.postings import BLOB_FILES, TERM_ARRAYS, IndexFormatError, Postings, bm25_weights
from ark.index.terms import TERMS_FILE, TermTable, save_table
from ark.index.tokenizer import Tokenizer
from ark.index.topk import EMPTY_IDS, EMPTY_SCORES, top_k, top_k_dense
from ark.storage.atomic import atomic_directory

FORMAT_VERSION = 2
# score() adds whole postings into a per-document array once the candidates are at least 1/16 of the corpus:
# cheaper than binary searches from there on (a 280k-neighbour hub of a 1.9M-node graph: 7 ms -> 2 ms).
DENSE_SCORING_FRACTION = 16
# search() ranks only the documents holding a query term when their postings total at most 1/32 of the corpus.
SPARSE_SEARCH_FRACTION = 32
# search() prunes (numba) from this many documents on; below, the exhaustive numpy pass is fast and starts at once.
# HPO (36,853 nodes) is above it: its tool call's search took ~200 us less pruned (2 December 2026, issue 50); the
# kernels are loaded before the first query by :mod:`ark.index.kernel_warm_up`.
PRUNE_MIN_DOCS = 20_000
# Pruned search first scores the documents of the query's rarest terms, up to this many postings (see
# _prune_kernel.top_k): a rare word next to a very frequent one otherwise keeps the k-th best score low while
# the frequent word's postings are walked (a 31-document word with a 980k-document one: 13 ms -> 0.1 ms).
SEED_POSTINGS = 4096
# ... or up to 1/256 of the corpus's documents on a larger index: walking the other terms costs more as their
# postings grow, so a larger seed (a higher early k-th best score) pays (3M Zipf documents, CPU median, caches as
# a run of different queries leaves them: 4,096 postings 1.78 ms, 12,288 1.47 ms; 1M: 4,096 best).
SEED_FRACTION = 256
# search() on a large index adds every posting of a query with this many distinct terms (compiled, term at a time)
# instead of walking them document at a time: the walk's work per document grows with the terms. On 1M Zipf
# documents (CPU ms, median of 12 queries, loaded machine) walk / add: 16 words 8.8 / 20.2, 24 words 20.9 / 23.6,
# 50 words 69 / 42, 200 words 488 / 85 (the numpy pass: 180-310).
LONG_QUERY_TERMS = 30
# A saved vocabulary of up to this many terms is looked up through a hash table (4 MB at most), larger ones by
# binary search (see BM25Index._compiled_query_terms).
HASHED_VOCABULARY_TERMS = 1 << 19
# ... and so does a query none of whose terms is rare enough to seed the pruned search (each holds more than its
# seed budget of postings) on an index of up to this many documents, where one score per document is cheap: the
# walk then visits most documents of its frequent terms anyway (HPO, a passage of seven words of 5k-14k
# documents each: 1.0-1.2 ms walked, 0.35-0.45 ms added; 3 December 2026, issue 50).
ACCUMULATE_MAX_DOCS = 262_144


class BM25Index:
    """BM25 index with global top-k :meth:`search` and subset :meth:`score` sharing one global IDF."""

    def __init__(
        self,
        postings: Postings,
        terms: Sequence[str],
        k1: float,
        b: float,
        tokenizer: Tokenizer,
        fields: dict | None = None,
        exact: ExactNames | None = None,
        files: BuildDirectory | None = None,
        term_ids: dict[str, int] | None = None,
    ) -> None:
        """``terms``: the vocabulary by term id, a list or a saved index's :class:`~ark.index.terms.TermTable`
        (which also answers the term -> id lookups); ``term_ids``: a list's term -> id dict when the caller has it
        (a build's vocabulary: not made twice). ``files`` keeps a fresh build's folder alive."""
        self.postings = postings
        self.terms = terms
        self.k1 = float(k1)
        self.b = float(b)
        self.tokenizer = tokenizer
        self.fields = fields  # BM25F: {"names": [...], "weights": [...], "b": [...]}; None for plain BM25
        self.exact = exact
        self._files = files
        self._term_ids: TermTable | dict[str, int] = (
            terms if isinstance(terms, TermTable) else term_ids if term_ids is not None
            else dict(zip(terms, range(len(terms)), strict=True)))
        n = len(postings.doc_lengths)
        self._avgdl = max(float(postings.doc_lengths.mean()) if n else 1.0, 1e-12)
        self._idf_cache: F64 | None = None
        self._vocabulary_arrays: tuple[U8, I64, Ints, bool] | None = None  # the last: hashed

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
        chunk_size: int | None = None,
        workdir: str | Path | None = None,
        memory_budget: int | None = None,
    ) -> BM25Index:
        """Index ``docs`` (streamed in chunks; document ``i`` gets id ``i``): strings, or an Arrow string array
        (e.g. a graph's text column; nulls are empty documents), which is tokenized without Python strings.

        ``num_docs`` only sizes the progress bar. The build's working memory stays within ``memory_budget``
        bytes (default 256 MiB; :mod:`ark.index.bm25_budget` derives the chunks, threads and merge batches from
        it), plus the vocabulary and 4 bytes a document; ``chunk_size`` caps a chunk's documents (default
        25,000). Chunks are spilled to disk as sorted runs under ``workdir`` (default: the temporary folder) and
        merged into postings files there, which the index maps until it is saved. The files do not depend on the
        budget or the chunk size.
        """
        if not (k1 >= 0):
            raise ValueError(f"k1 must be >= 0, got {k1!r}")
        if not (0 <= b <= 1):
            raise ValueError(f"b must be in [0, 1], got {b!r}")
        budget = build_budget(memory_budget, chunk_size)
        tokenizer = tokenizer or Tokenizer()
        files = BuildDirectory(Path(workdir) if workdir is not None else None)
        runs = SortedRuns(files.path / "runs", 1)
        terms, term_ids = count_chunks(docs, tokenizer, runs, budget, num_docs, progress)
        postings = runs.merge(files.path, len(terms), budget.merge_postings, workers=budget.workers)
        return cls(postings, terms, k1, b, tokenizer, files=files, term_ids=term_ids)

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
        chunk_size: int | None = None,
        workdir: str | Path | None = None,
        memory_budget: int | None = None,
    ) -> BM25Index:
        """BM25F over documents made of fields: ``docs[i][f]`` is field ``f`` of document ``i`` (see the module doc).

        ``weights[f]`` and ``b[f]`` are each field's weight and length normalisation; memory as :meth:`build`.
        """
        n_fields = len(field_names)
        if not (len(weights) == len(b) == n_fields and n_fields):
            raise ValueError(f"need one weight and one b per field: fields {list(field_names)}, weights "
                             f"{list(weights)}, b {list(b)}")
        if not (k1 >= 0):
            raise ValueError(f"k1 must be >= 0, got {k1!r}")
        if any(not (0 <= x <= 1) for x in b) or any(not (w >= 0) for w in weights):
            raise ValueError(f"field b must be in [0, 1] and weights >= 0, got b {list(b)}, weights {list(weights)}")
        budget = build_budget(memory_budget, chunk_size)
        tokenizer = tokenizer or Tokenizer()
        files = BuildDirectory(Path(workdir) if workdir is not None else None)
        runs = SortedRuns(files.path / "runs", n_fields)
        terms, term_ids = count_fielded_chunks(docs, n_fields, tokenizer, runs, budget, num_docs, progress)
        field_weights, field_b = [float(w) for w in weights], [float(x) for x in b]
        postings = runs.merge(files.path, len(terms), budget.merge_postings, fields=(field_weights, field_b),
                              workers=budget.workers)
        fields = {"names": list(field_names), "weights": field_weights, "b": field_b}
        # The pseudo frequencies are length-normalised: the saturation constant is k1 alone (b = 0).
        return cls(postings, terms, k1, 0.0, tokenizer, fields=fields, exact=exact, files=files, term_ids=term_ids)

    # ------------------------------------------------------------------ properties
    @property
    def num_docs(self) -> int:
        return len(self.postings.doc_lengths)

    @property
    def doc_lengths(self) -> I32:
        return self.postings.doc_lengths

    @property
    def vocabulary_size(self) -> int:
        return len(self.terms)

    @property
    def _idf(self) -> F64:
        """Every term's ``log(1 + (N - df + 0.5) / (df + 0.5))``, computed once over the whole vocabulary."""
        if self._idf_cache is None:
            df = np.diff(np.asarray(self.postings.term_ptr)).astype(np.int64, copy=False)
            self._idf_cache = np.log1p((self.num_docs - df + 0.5) / (df + 0.5))
        return self._idf_cache

    def _query_terms(self, query: str) -> list[tuple[int, int]]:
        """Known query terms as (term id, occurrences), in order of first occurrence."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        if isinstance(self._term_ids, TermTable) and self._prunes():
            return self._compiled_query_terms(query)
        counts: dict[int, int] = {}
        for term in self.tokenizer.tokenize(query):
            tid = self._term_ids.get(term)
            if tid is not None:
                counts[tid] = counts.get(tid, 0) + 1
        return list(counts.items())

    def _compiled_query_terms(self, query: str) -> list[tuple[int, int]]:
        """:meth:`_query_terms` on a large saved index: every term looked up in one compiled call (a Python binary
        search over the saved vocabulary takes ~20 us a term, most of a rare word's query). A vocabulary of up to
        :data:`HASHED_VOCABULARY_TERMS` terms is looked up through a hash table made once (4-8 bytes a term): one
        probe a term where the binary search took ~17 steps of three dependent reads, cold in a tool call."""
        kernel = required_kernel("_lookup_kernel")
        if self._vocabulary_arrays is None:
            blob, offsets, order = self._term_ids.arrays()  # type: ignore[union-attr]
            if len(order) <= HASHED_VOCABULARY_TERMS:
                table = kernel.hash_table(blob, offsets, len(order))  # type: ignore[call-arg]
                self._vocabulary_arrays = (blob, offsets, table, True)
            else:
                self._vocabulary_arrays = (blob, offsets, order, False)
        # A lone surrogate passes as bytes no saved term (valid UTF-8) holds: not found, as TermTable.get says.
        keys = np.frombuffer("\n".join(self.tokenizer.tokenize(query)).encode("utf-8", "surrogatepass"), np.uint8)
        blob, offsets, found_by, hashed = self._vocabulary_arrays
        lookup = kernel.hashed_rows if hashed else kernel.query_rows
        rows = lookup(blob, offsets, found_by, keys)  # type: ignore[call-arg]  # numba's stubs: no signature
        return [(tid, count) for tid, count in rows.tolist()]

    def _exactly_named(self, query: str) -> I64:
        """Documents one of whose names equals the whole query (empty without an exact-names table)."""
        return self.exact.lookup(query) if self.exact is not None else np.zeros(0, dtype=np.int64)

    def _exact_boost(self, terms: list[tuple[int, int]]) -> np.float32:
        """``sum of count * idf`` over the query terms (at least 1): no document's BM25 score can reach it."""
        idf, total = self._idf, 0.0
        for tid, count in terms:  # each term's idf as _idf holds it: the same log1p, not made again per query
            total += count * float(idf[tid])
        return np.float32(max(total, 1.0))

    def _postings(self, tid: int, count: int = 1) -> tuple[I32, F32]:
        """Term ``tid``'s documents (ascending) and float32 weights, times ``count`` (its occurrences in the query)."""
        docs = self.postings.docs(tid)
        weights = bm25_weights(self._idf[tid], self.postings.tf(tid), self.postings.doc_lengths[docs], self.k1,
                               self.b, self._avgdl)
        return docs, weights if count == 1 else weights * np.float32(count)

    # ------------------------------------------------------------------ queries
    def search(self, query: str, k: int, mask: Bools | None = None) -> tuple[I64, F32]:
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
        if terms and self._prunes() and (len(terms) >= LONG_QUERY_TERMS or self._all_common(terms)):
            return bm25_prune.accumulated_top_k(self.postings, terms, self._idf, self.k1, self.b, self._avgdl, k,
                                                mask, np.asarray(named, dtype=np.int64), self._exact_boost(terms))
        if terms and self._prunes():
            return self._pruned_search(terms, named, k, mask)
        scores = np.zeros(self.num_docs, dtype=np.float32)
        touched = []
        for tid, count in terms:
            docs, weights = self._postings(tid, count)
            np.add.at(scores, docs, weights)  # 3x faster than +=
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

    def _prunes(self) -> bool:
        """Whether queries go through the compiled kernels (a large index, numba installed)."""
        return self.num_docs >= PRUNE_MIN_DOCS and bm25_prune.available()

    def _seed_budget(self) -> int:
        """How many postings of the query's rarest terms seed the pruned search (0: none)."""
        return max(SEED_POSTINGS, self.num_docs // SEED_FRACTION) if SEED_POSTINGS else 0

    def _all_common(self, terms: list[tuple[int, int]]) -> bool:
        """Whether no term of the query would seed the pruned search on this (small) index: it is then cheaper to
        add every posting (see :data:`ACCUMULATE_MAX_DOCS`)."""
        budget = self._seed_budget()
        if not budget or self.num_docs > ACCUMULATE_MAX_DOCS:
            return False
        ptr = self.postings.term_ptr
        return all(int(ptr[tid + 1] - ptr[tid]) > budget for tid, _ in terms)

    def _pruned_search(self, terms: list[tuple[int, int]], named: I64, k: int,
                       mask: Bools | None) -> tuple[I64, F32]:
        """:meth:`search` by dynamic pruning, in one compiled call. The exactly named documents and every document
        of the query's rarest terms are scored first and seed the result (a seed is looked up in the other terms
        only while it can still reach the k-th best score); the walk passes over them, so it needs only the other
        terms (a document it visits holds no rare term), and starts with a high k-th best score."""
        boost = self._exact_boost(terms) if len(named) else np.float32(0)
        return bm25_prune.pruned_top_k(self.postings, terms, self._idf, self.k1, self.b, self._avgdl, k, mask,
                                       np.asarray(named, dtype=np.int64), boost, self._seed_budget())

    def score(self, query: str, candidates: Ints | Sequence[int]) -> F32:
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
        terms = self._query_terms(query)
        if terms and self._prunes():  # compiled: sorted, scored and put back in one call
            out = bm25_prune.subset_scores(self.postings, terms, self._idf, self.k1, self.b, self._avgdl,
                                           cand.ravel(), distinct=False)
            named = self._exactly_named(query)
            if len(named):
                out[np.isin(cand.ravel(), named)] += self._exact_boost(terms)  # as _sorted_scores adds it
            return out.reshape(cand.shape)
        # Work on the sorted distinct candidates: numpy's searchsorted is much faster with sorted keys, and each
        # term's postings are sorted too, so the shorter side is binary-searched in the longer one.
        # The candidates' sort order gives each one its slot among the distinct ones (no binary search back).
        flat = cand.ravel()
        order = np.argsort(flat, kind="stable")
        ranked = flat[order]
        first = np.empty(len(ranked), dtype=bool)
        first[0] = True
        np.not_equal(ranked[1:], ranked[:-1], out=first[1:])
        acc = self._sorted_scores(terms, self._exactly_named(query), ranked[first])
        out = np.empty(len(flat), dtype=np.float32)
        out[order] = acc[np.cumsum(first) - 1]
        return out.reshape(cand.shape)

    def _sorted_scores(self, terms: list[tuple[int, int]], named: I64, unique: I64) -> F32:
        """float32 scores of sorted distinct documents, the exactly ``named`` ones boosted."""
        acc = self._subset_scores(terms, unique)
        if len(named) and len(unique):
            acc[np.isin(unique, named)] += self._exact_boost(terms)
        return acc

    def _subset_scores(self, terms: list[tuple[int, int]], unique: I64) -> F32:
        """float32 scores of sorted distinct candidates, term by term (binary search in decoded postings)."""
        if terms and self._prunes():  # compiled: a term's postings decoded only where a candidate may be
            return bm25_prune.subset_scores(self.postings, terms, self._idf, self.k1, self.b, self._avgdl, unique)
        keys = unique.astype(np.int32)  # the postings' dtype: searchsorted would otherwise convert whole postings
        acc = np.zeros(len(unique), dtype=np.float32)
        for tid, count in terms:
            docs = self.postings.docs(tid)
            if len(docs) == 0:
                continue
            if len(docs) >= len(unique):
                pos = np.searchsorted(docs, keys)
                np.minimum(pos, len(docs) - 1, out=pos)
                hit = docs[pos] == keys
                where, at = hit, pos[hit]
            else:
                pos = np.searchsorted(keys, docs)
                np.minimum(pos, len(keys) - 1, out=pos)
                hit = keys[pos] == docs
                where, at = pos[hit], np.flatnonzero(hit)
            found = bm25_weights(self._idf[tid], self.postings.tf(tid)[at], self.postings.doc_lengths[docs[at]],
                                 self.k1, self.b, self._avgdl)
            acc[where] += found if count == 1 else found * np.float32(count)
        return acc

    def _score_dense(self, query: str, cand: I64) -> F32:
        """:meth:`score` for a large candidate set (a hub's neighbours): each query term's postings are added into
        one score per document, then the candidates are read off. Linear in the postings and the candidates, with
        no sort; the float32 sums are added in the same order as the subset path, so the scores are identical."""
        dense = np.zeros(self.num_docs, dtype=np.float32)
        terms = self._query_terms(query)
        for tid, count in terms:
            docs, weights = self._postings(tid, count)
            np.add.at(dense, docs, weights)
        named = self._exactly_named(query)
        if len(named):
            dense[named] += self._exact_boost(terms)  # as the subset path: the same scores either way
        return dense[cand.ravel()].reshape(cand.shape)

    def highlight_terms(self, query: str) -> list[str]:
        """The words to highlight for ``query``: its tokens (lowercased, before stemming), then their index terms
        (stems) not already among them."""
        surface = self.tokenizer.surface_tokens(query)
        stems = [self.tokenizer.term_of(token) for token in surface]
        return list(dict.fromkeys([*surface, *(t for t in stems if t)]))

    def matched_terms(self, query: str, doc: int) -> list[str]:
        """Distinct query tokens (lowercased, before stemming) whose term occurs in document ``doc``."""
        if not 0 <= doc < self.num_docs:
            raise ValueError(f"doc {doc} is out of range: valid ids are 0..{self.num_docs - 1}")
        matched: list[str] = []
        for raw in dict.fromkeys(self.tokenizer.surface_tokens(query)):
            tid = self._term_ids.get(self.tokenizer.term_of(raw))  # type: ignore[arg-type]
            if tid is None:
                continue
            docs = self.postings.docs(tid)
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
            if self._files is not None:  # a fresh build: link (or copy) its postings files instead of rewriting
                for name in [*BLOB_FILES.values()]:
                    _link_or_copy(self._files.path / name, tmp / name)
                for name in TERM_ARRAYS:
                    np.save(tmp / f"{name}.npy", np.ascontiguousarray(getattr(self.postings, name)))
                layout = {"tf_dtype": np.dtype(self.postings.tfs.dtype).str}
            else:
                layout = self.postings.save(tmp)
            (tmp / TERMS_FILE).write_text("\n".join(self.terms), encoding="utf-8")
            save_table(tmp, self.terms)
            if self.exact is not None:
                self.exact.save(tmp)
            meta = {**self.settings(), **layout, "num_docs": self.num_docs, "num_terms": self.vocabulary_size}
            (tmp / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path, mmap: bool = True) -> BM25Index:
        """Open an index written by :meth:`save`; arrays are memory-mapped unless ``mmap=False``.

        An index of another format raises :class:`IndexFormatError` (a graph's cached index is then rebuilt)."""
        directory = Path(directory)
        meta_path = directory / "meta.json"
        if not meta_path.is_file():
            raise FileNotFoundError(f"no BM25 index at {directory} (missing meta.json)")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT_VERSION:
            raise IndexFormatError(f"index at {directory} has format {meta.get('format')!r}, expected "
                                   f"{FORMAT_VERSION}")
        postings = Postings.load(directory, meta, mmap)
        terms: Sequence[str] | None = TermTable.load(directory, meta["num_terms"], mmap)
        if terms is None:  # saved before the table existed: read the list, and save the table for next time
            text = (directory / TERMS_FILE).read_text(encoding="utf-8")
            terms = text.split("\n") if meta["num_terms"] else []
            with contextlib.suppress(OSError):  # a read-only index folder stays as it is
                save_table(directory, terms)
        return cls(
            postings, terms=terms, k1=meta["k1"], b=meta["b"], tokenizer=Tokenizer.from_config(meta["tokenizer"]),
            fields=meta.get("fields"), exact=ExactNames.load(directory, mmap=mmap),
        )

    def __repr__(self) -> str:
        kind = f", fields={self.fields['names']}" if self.fields else ""
        return f"BM25Index(num_docs={self.num_docs}, terms={self.vocabulary_size}, k1={self.k1}, b={self.b}{kind})"


def _link_or_copy(source: Path, target: Path) -> None:
    """Hard-link ``source`` to ``target`` (same file system, no copy), else copy it."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
