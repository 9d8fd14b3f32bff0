"""Building a BM25 index in bounded memory: count each chunk of documents, spill it to disk as a sorted run, merge.

Each chunk of documents is split and counted in vectorised passes (one Python lookup per distinct raw token, none per
token), turned term-major (scipy's CSR -> CSC counting sort) and written to disk as a *run*: its documents and term
frequencies ordered by term, then by document. Documents are numbered in input order, so a term's postings are its
postings of run 0, then run 1, ...: the merge reads the runs term batch by term batch (each batch holding about
``merge_postings`` postings) and scatters each run's slice after the previous runs' ones, with no sort. Peak memory
is thus a few chunks or a few merge batches, sized by the build's memory budget (:mod:`ark.index.bm25_budget`),
plus the vocabulary and one length per document; the postings themselves go to files
(:class:`~ark.index.postings.PostingsWriter`).

BM25F (fielded) runs keep each field's raw frequency; the merge, once every field's average length is known, turns
them into the pseudo frequency ``sum_f w_f * tf_f / (1 - b_f + b_f * len_f / avglen_f)`` (float64 in field order,
stored as float32, as format 1 computed it).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ark.arrays import F32, F64, I32, I64, Ints
from ark.index._progress import progress_bar
from ark.index.bm25_budget import BuildBudget, release_freed_memory, released
from ark.index.bm25_chunks import (
    TermMajor,
    _chunk_term_counts,
    _ChunkCounts,
    _chunks,
    _chunks_of_records,
    _fielded_counts,
    _term_major_counts,
    _Vocabulary,
)
from ark.index.postings import BLOCK, EncodedPostings, Postings, PostingsWriter, _encode_kernel, tf_dtype
from ark.index.tokenizer import SplitBatch, Tokenizer
from ark.storage.full_disk import naming_full_disk

# Worker threads per pipelined step of a build (0: every step in the calling thread; the output is the same).
PIPELINE_WORKERS = 2

_T = TypeVar("_T")
_R = TypeVar("_R")
_N = TypeVar("_N", np.int32, np.int64, np.float32)  # the dtypes of a run's files
Fields: TypeAlias = tuple[Sequence[float], Sequence[float]]  # BM25F: (weights, b), one each per field
# A merge batch: whole terms ("terms", t0, t1, batch number), or a piece of one term's postings
# ("piece", t, p0, p1, delta width, (run, first posting, count) slices)
_MergeItem: TypeAlias = (tuple[Literal["terms"], int, int, int]
                         | tuple[Literal["piece"], int, int, int, int, list[tuple["_Run", int, int]]])

AUTO_BAR_DOCS = 200_000  # about 2 s of indexing: from here a terminal shows a bar even unasked


def _in_order(work: Callable[[_T], _R], items: Iterable[_T], workers: int | None = None) -> Iterator[_R]:
    """``map(work, items)`` with ``workers`` items in worker threads at a time, results in input order.

    Arrow's kernels, scipy's sparse tools and most of numpy release the GIL, so the steps of a build overlap on
    several cores: splitting the next chunks, counting and spilling the previous ones, and the vocabulary (Python
    dict lookups, which need the GIL) in the calling thread. Every step's output depends only on its own input, so
    the files written are the same with any number of workers (``PIPELINE_WORKERS = 0``: no threads, as the tests
    check).
    """
    workers = PIPELINE_WORKERS if workers is None else workers
    if workers <= 0:
        yield from map(work, items)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque[Future[_R]] = deque()
        for item in items:
            pending.append(pool.submit(work, item))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


@dataclass
class _Run:
    terms: Path  # distinct term ids of the run, ascending (raw int32)
    ptr: Path  # their postings' offsets in the run (raw int64, one more than terms)
    docs: Path  # int32 document ids, term-major (raw)
    tf: Path  # float32 frequencies, one row per field (raw)
    size: int
    cuts: I64 | None = None  # the merge's: each batch's first term's index in ``terms`` (and the end)

    def read(self, path: Path, dtype: type[_N], start: int, count: int, n_fields: int = 1) -> npt.NDArray[_N]:
        """``count`` values from ``start`` of one of the run's raw files (``n_fields`` rows of ``size`` for tf):
        one read, no memory map (a merge reads each run once per batch: at 10M documents, 400 runs x 250)."""
        itemsize = np.dtype(dtype).itemsize
        rows: list[npt.NDArray[_N]] = [
            np.fromfile(path, dtype=dtype, count=count, offset=itemsize * (f * self.size + start))
            for f in range(n_fields)]
        return rows[0] if n_fields == 1 else np.stack(rows)


@dataclass
class _Spilled:
    """One chunk written as a run (``run`` is None for a chunk without postings), with its statistics."""

    per_term: I64  # postings per term id of the chunk
    max_tf: float
    field_lengths: I32  # (n_fields, n)
    doc_lengths: I32
    run: _Run | None


class SortedRuns:
    """Chunks of postings spilled to ``directory`` in term-major order, merged into a :class:`Postings`."""

    def __init__(self, directory: Path, n_fields: int) -> None:
        self.directory = directory
        self.n_fields = n_fields
        self.runs: list[_Run] = []
        self.df = np.zeros(0, dtype=np.int64)
        self.max_tf = 0.0
        self.lengths: list[I32] = []  # per chunk: (n_fields, n) field lengths
        self.doc_lengths: list[I32] = []
        self.num_docs = 0

    def add(self, counts: _ChunkCounts, field_lengths: I32) -> None:
        """Spill one chunk (document-major counts; ``counts.tf`` one row per field) as the next run."""
        self.append(self.spill(counts, field_lengths, self.num_docs, len(self.runs)))

    def spill(self, counts: _ChunkCounts, field_lengths: I32, first_doc: int, number: int) -> _Spilled:
        """Write one chunk whose documents start at ``first_doc`` as run file set ``number``, touching nothing
        shared (worker threads spill chunks side by side); :meth:`append` then adds it, chunks in order."""
        import scipy.sparse as sp  # building only: loading and searching need numpy alone (start-up)

        n, tf = len(counts.lengths), counts.tf.reshape(self.n_fields, -1)
        n_terms = int(counts.terms.max()) + 1 if len(counts.terms) else 0
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts.row_counts, out=indptr[1:])
        order = np.arange(len(counts.terms), dtype=np.int64)
        term_major = sp.csr_matrix((order, counts.terms, indptr), shape=(n, max(n_terms, 1))).tocsc()
        return self.spill_term_major(TermMajor(term_major.indptr, term_major.indices, tf[:, term_major.data],
                                               counts.lengths), field_lengths, first_doc, number)

    def spill_term_major(self, counts: TermMajor, field_lengths: I32, first_doc: int,
                         number: int) -> _Spilled:
        """:meth:`spill` for counts already term-major."""
        n_terms = len(counts.ptr) - 1
        while n_terms and counts.ptr[n_terms - 1] == counts.ptr[n_terms]:  # as many terms as the last one present
            n_terms -= 1
        per_term = np.diff(counts.ptr)[:n_terms].astype(np.int64, copy=False)
        tf = counts.tf
        spilled = _Spilled(per_term, float(tf.max()) if tf.size else 0.0, field_lengths, counts.lengths, None)
        if not len(counts.docs):
            return spilled
        present = np.flatnonzero(per_term).astype(np.int32)
        name = self.directory / f"run{number:05d}"
        run = _Run(name.with_suffix(".terms"), name.with_suffix(".ptr"), name.with_suffix(".docs"),
                   name.with_suffix(".tf"), len(counts.docs))
        _write_raw(present, run.terms)
        ptr = np.zeros(len(present) + 1, dtype=np.int64)
        np.cumsum(per_term[present], out=ptr[1:])
        _write_raw(ptr, run.ptr)
        _write_raw(counts.docs.astype(np.int32) + np.int32(first_doc), run.docs)
        _write_raw(np.ascontiguousarray(tf), run.tf)
        spilled.run = run
        return spilled

    def append(self, spilled: _Spilled) -> None:
        """Add the next chunk's spilled run and its statistics."""
        n_terms = len(spilled.per_term)
        if len(self.df) < n_terms:
            self.df = np.concatenate([self.df, np.zeros(n_terms - len(self.df), dtype=np.int64)])
        self.df[:n_terms] += spilled.per_term
        self.max_tf = max(self.max_tf, spilled.max_tf)
        self.lengths.append(spilled.field_lengths)
        self.doc_lengths.append(spilled.doc_lengths)
        self.num_docs += len(spilled.doc_lengths)
        if spilled.run is not None:
            self.runs.append(spilled.run)

    def merge(self, out: Path, num_terms: int, batch_postings: int, fields: Fields | None = None,
              workers: int | None = None) -> Postings:
        """Merge the runs into postings files in ``out``; ``fields = (weights, b)`` for BM25F pseudo frequencies;
        ``workers`` threads gather and encode batches (default: the pipeline's)."""
        df = np.concatenate([self.df, np.zeros(max(num_terms - len(self.df), 0), dtype=np.int64)])
        doc_lengths = np.concatenate(self.doc_lengths) if self.doc_lengths else np.zeros(0, np.int32)
        norms = self._field_norms(fields) if fields is not None else None
        writer = PostingsWriter(out, tf_dtype(self.max_tf, fields is not None), doc_lengths)

        def frequencies(docs: I32, tf: F32) -> F32:
            if norms is None:
                return tf[0]
            assert fields is not None  # norms are computed for fielded indexes only
            pseudo = np.zeros(len(docs), dtype=np.float64)
            for f, norm in enumerate(norms):
                pseudo += fields[0][f] * tf[f].astype(np.float64) / norm[docs]
            return pseudo.astype(np.float32)

        def encoded(item: _MergeItem) -> EncodedPostings:  # in worker threads: reads runs, writes nothing
            if item[0] == "terms":
                _, t0, t1, number = item
                docs, tf = self._gather(t0, t1, df, number)
                return writer.encode(df[t0:t1], docs, frequencies(docs, tf))
            _, t, p0, p1, width, slices = item
            docs, tf = _read_postings(slices, max(p0 - 1, 0), p1, self.n_fields)
            if p0:  # the previous piece's last document, for the first delta
                return writer.encode_piece(docs[1:], int(docs[0]), frequencies(docs[1:], tf[:, 1:]), width, None)
            return writer.encode_piece(docs, None, frequencies(docs, tf), width, int(df[t]))

        # Each batch reads every run's slice (a fixed cost per run): batches are not made smaller for the threads.
        threads = _merge_workers(workers)
        for batch in _in_order(released(encoded, threads), self._merge_items(df, num_terms, batch_postings), threads):
            writer.write(batch)
            release_freed_memory()
        # Unlinking a few hundred MB of runs takes most of a second: a thread does it while the index is finished.
        threading.Thread(target=shutil.rmtree, args=(self.directory, True), name="bm25-runs-cleanup").start()
        return writer.close()

    def _merge_items(self, df: I64, num_terms: int, batch_postings: int) -> Iterator[_MergeItem]:
        """The merge's work: ``("terms", t0, t1, batch number)`` batches of whole terms, and a term with more
        postings than a batch (a frequent word: one in most documents has as many postings as the corpus documents)
        in pieces of whole blocks, ``("piece", t, p0, p1, width, slices)``: memory stays bounded by the batch, not
        the corpus. Each run's term list is read once here, to find where each batch starts in it."""
        batches = list(_term_batches(df, num_terms, batch_postings))
        starts = np.array([t0 for t0, _ in batches] + [num_terms], dtype=np.int64)
        for run in self.runs:
            run.cuts = np.searchsorted(np.fromfile(run.terms, dtype=np.int32), starts)
        piece = max(batch_postings // BLOCK, 1) * BLOCK  # whole blocks: each piece's groups are the term's
        for number, (t0, t1) in enumerate(batches):
            if t1 - t0 > 1 or df[t0] <= piece:
                yield "terms", t0, t1, number
                continue
            slices = self._term_slices(number)
            width = _delta_width(slices, int(df[t0]), piece, self.n_fields)
            for p0 in range(0, int(df[t0]), piece):
                yield "piece", t0, p0, min(p0 + piece, int(df[t0])), width, slices

    def _term_slices(self, number: int) -> list[tuple[_Run, int, int]]:
        """Where the one term of batch ``number`` has its postings in the runs: (run, first posting, count)."""
        slices = []
        for run in self.runs:
            assert run.cuts is not None
            at = int(run.cuts[number])
            if run.cuts[number + 1] > at:
                p0, p1 = run.read(run.ptr, np.int64, at, 2).tolist()
                slices.append((run, p0, p1 - p0))
        return slices

    def _field_norms(self, fields: Fields) -> list[F64]:
        weights, bs = fields
        per_field = np.concatenate(self.lengths, axis=1) if self.lengths else np.zeros((self.n_fields, 0), np.int32)
        norms = []
        for f in range(self.n_fields):
            lengths = per_field[f]
            avg = max(float(lengths.mean()), 1e-12) if len(lengths) else 1.0
            norms.append(1.0 - bs[f] + bs[f] * lengths / avg)
        return norms

    def _gather(self, t0: int, t1: int, df: I64, number: int) -> tuple[I32, F32]:
        """Term-major postings of terms ``t0 .. t1 - 1`` (merge batch ``number``) from every run, each term's runs
        in order."""
        counts = df[t0:t1]
        fill = np.zeros(len(counts), dtype=np.int64)
        np.cumsum(counts[:-1], out=fill[1:])
        total = int(counts.sum())
        docs = np.empty(total, dtype=np.int32)
        tf = np.empty((self.n_fields, total), dtype=np.float32)
        kernel = _encode_kernel()
        for run in self.runs:
            assert run.cuts is not None
            i0, i1 = int(run.cuts[number]), int(run.cuts[number + 1])
            if i0 == i1:
                continue
            ptr = run.read(run.ptr, np.int64, i0, i1 - i0 + 1)
            p0, p1 = int(ptr[0]), int(ptr[-1])
            local = run.read(run.terms, np.int32, i0, i1 - i0).astype(np.int64) - t0
            run_docs = run.read(run.docs, np.int32, p0, p1 - p0)
            run_tf = run.read(run.tf, np.float32, p0, p1 - p0, self.n_fields).reshape(self.n_fields, -1)
            if kernel is not None:
                kernel.scatter_run(fill, local, ptr, run_docs, run_tf, docs, tf)
                continue
            sizes = np.diff(ptr)
            dest = np.repeat(fill[local] - (ptr[:-1] - p0), sizes) + np.arange(p1 - p0)
            docs[dest] = run_docs
            tf[:, dest] = run_tf
            fill[local] += sizes
        return docs, tf


def _write_raw(array: Ints | F32, path: Path) -> None:
    """``array.tofile(path)``; a full disk is an error naming ``path`` (numpy's says only "N requested and M
    written")."""
    with naming_full_disk(path):
        array.tofile(path)


def _read_postings(slices: list[tuple[_Run, int, int]], p0: int, p1: int,
                   n_fields: int) -> tuple[I32, F32]:
    """Postings ``p0 .. p1 - 1`` of one term whose postings lie in ``slices`` (see ``SortedRuns._term_slices``)."""
    docs = np.empty(p1 - p0, dtype=np.int32)
    tf = np.empty((n_fields, p1 - p0), dtype=np.float32)
    seen = 0
    for run, start, count in slices:
        lo, hi = max(p0, seen), min(p1, seen + count)
        if lo < hi:
            first = start + lo - seen
            docs[lo - p0: hi - p0] = run.read(run.docs, np.int32, first, hi - lo)
            tf[:, lo - p0: hi - p0] = run.read(run.tf, np.float32, first, hi - lo, n_fields).reshape(n_fields, -1)
        seen += count
    return docs, tf


def _delta_width(slices: list[tuple[_Run, int, int]], df: int, piece: int, n_fields: int) -> int:
    """Bytes a delta of a term read piece by piece (the narrowest of 1, 2, 4 holding its largest gap)."""
    largest = 0
    for p0 in range(0, df, piece):
        docs = _read_postings(slices, max(p0 - 1, 0), min(p0 + piece, df), n_fields)[0]
        if len(docs) > 1:
            largest = max(largest, int(np.diff(docs).max()))
    return 1 if largest < 2**8 else 2 if largest < 2**16 else 4


def _term_batches(df: I64, num_terms: int, batch_postings: int) -> Iterator[tuple[int, int]]:
    """Consecutive term ranges ``(t0, t1)`` of about ``batch_postings`` postings each (at least one term)."""
    ends = np.cumsum(df)
    t0 = 0
    while t0 < num_terms:
        base = ends[t0 - 1] if t0 else 0
        t1 = min(max(int(np.searchsorted(ends, base + batch_postings, side="right")), t0 + 1), num_terms)
        yield t0, t1
        t0 = t1


class BuildDirectory:
    """A temporary folder holding a freshly built index's files (memory-mapped), removed when the index goes."""

    def __init__(self, parent: Path | None = None) -> None:
        if parent is not None:
            parent.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix="bm25-", dir=parent))
        (self.path / "runs").mkdir()
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.path, True)


def _merge_workers(workers: int | None = None) -> int:
    """Threads gathering and encoding merge batches: one without numba (numpy's many small steps contend for the
    GIL), else the pipeline's (the compiled loops release it)."""
    workers = PIPELINE_WORKERS if workers is None else workers
    return workers if _encode_kernel() is not None else min(workers, 1)


def _spill_workers(workers: int | None = None) -> int:
    """One thread counts and spills chunks while the calling thread looks the next one up (more hold more chunks),
    and one gathers and encodes merge batches while it writes (two contended for the GIL: slower at 1M docs)."""
    return min(PIPELINE_WORKERS if workers is None else workers, 1)


def build_budget(memory_budget: int | None, chunk_size: int | None) -> BuildBudget:
    """The chunking of a build within ``memory_budget`` bytes (:mod:`ark.index.bm25_budget`), with the pipeline's
    threads (:data:`PIPELINE_WORKERS`) where the budget holds their chunks."""
    return BuildBudget.of(memory_budget, chunk_size, PIPELINE_WORKERS)


def _first_seen(batch: SplitBatch, n_fields: int = 1) -> I64:
    """Each dictionary entry's first token in document order (document, then field, then position): the tokens of a
    text are contiguous and in order, but texts may not be (non-ASCII texts' tokens come after the others; a
    fielded chunk's virtual document ``f * n + i`` is field ``f`` of document ``i``)."""
    doc_ids = batch.doc_ids
    if n_fields > 1:
        n = batch.num_texts // n_fields
        doc_ids = (doc_ids % n) * n_fields + doc_ids // n
    rank = np.arange(len(doc_ids), dtype=np.int64)
    if len(doc_ids) > 1 and bool((doc_ids[1:] < doc_ids[:-1]).any()):
        rank[np.argsort(doc_ids, kind="stable")] = rank.copy()
    first = np.full(len(batch.dictionary), len(doc_ids), dtype=np.int64)
    np.minimum.at(first, batch.codes, rank)
    return first


def _looked_up(batches: Iterable[SplitBatch], vocab: _Vocabulary,
               n_fields: int = 1) -> Iterator[tuple[SplitBatch, I64, int, int]]:
    """Each split chunk with its dictionary's term ids, the vocabulary's size then and the chunk's first (virtual)
    document: the one sequential step (term ids are numbered in order of first occurrence in the corpus), run in
    the calling thread."""
    first_doc = 0
    for batch in batches:
        ids = vocab.ids_of(batch.dictionary, batch.packed, _first_seen(batch, n_fields))
        yield batch, ids, len(vocab.terms), first_doc
        first_doc += batch.num_texts


def count_chunks(docs: Iterable[str] | pa.Array | pa.ChunkedArray, tokenizer: Tokenizer, runs: SortedRuns,
                 budget: BuildBudget, num_docs: int | None, progress: bool) -> tuple[list[str], dict[str, int]]:
    """Plain BM25: tokenize and count ``docs`` chunk by chunk into ``runs``; returns the vocabulary by term id and
    its term -> id dict."""
    vocab = _Vocabulary(tokenizer)

    def spilled(item: tuple[SplitBatch, I64, int, int]) -> _Spilled:  # in a worker thread
        batch, term_ids, width, first_doc = item
        counts = _term_major_counts(batch, term_ids, width)
        return runs.spill_term_major(counts, counts.lengths[None, :], first_doc, first_doc)

    with progress_bar("BM25 indexing", num_docs, progress, auto_from=AUTO_BAR_DOCS) as bar:
        split = _in_order(released(tokenizer.split, budget.workers),
                          _chunks(docs, budget.chunk_docs, budget.chunk_chars), budget.workers)
        spill_workers = _spill_workers(budget.workers)
        for chunk in _in_order(released(spilled, spill_workers), _looked_up(split, vocab), spill_workers):
            runs.append(chunk)
            release_freed_memory()
            bar.advance(len(chunk.doc_lengths))
    return vocab.terms, vocab.term_ids


def count_fielded_chunks(docs: Iterable[Sequence[str]], n_fields: int, tokenizer: Tokenizer, runs: SortedRuns,
                         budget: BuildBudget, num_docs: int | None,
                         progress: bool) -> tuple[list[str], dict[str, int]]:
    """BM25F: each chunk's fields split as one batch of ``n * F`` virtual documents (field-major), counted, and
    merged per (document, term) with one frequency per field, into ``runs``; returns the vocabulary."""
    vocab = _Vocabulary(tokenizer)

    def flattened() -> Iterator[list[str]]:
        for chunk in _chunks_of_records(docs, budget.chunk_docs, n_fields, budget.chunk_chars):
            yield [chunk[i][f] for f in range(n_fields) for i in range(len(chunk))]

    def spilled(item: tuple[SplitBatch, I64, int, int]) -> _Spilled:  # in a worker thread
        batch, term_ids, width, first_virtual = item
        n = batch.num_texts // n_fields
        counts, lengths = _fielded_counts(_chunk_term_counts(batch, term_ids, width), n, n_fields, width)
        first_doc = first_virtual // n_fields
        return runs.spill(counts, lengths, first_doc, first_doc)

    with progress_bar("BM25F indexing", num_docs, progress, auto_from=AUTO_BAR_DOCS) as bar:
        split = _in_order(released(tokenizer.split, budget.workers), flattened(), budget.workers)
        spill_workers = _spill_workers(budget.workers)
        for chunk in _in_order(released(spilled, spill_workers), _looked_up(split, vocab, n_fields), spill_workers):
            runs.append(chunk)
            release_freed_memory()
            bar.advance(len(chunk.doc_lengths))
    return vocab.terms, vocab.term_ids
