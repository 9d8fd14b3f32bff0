"""Exact top-k BM25 without scoring every matching posting: MaxScore with block-max bounds, compiled with numba.

Why compiled: dynamic pruning walks the query terms' postings document by document, deciding at each document
whether the rest can still reach the k-th best score and skipping whole blocks when not. That control flow is
sequential per posting; numpy can only express it by scoring every posting (the exhaustive path this replaces on
large indexes). numba (a PyPI wheel) compiles the loop (:mod:`ark.index._prune_kernel`); it is imported only when a
large index is searched, and the compiled code is cached on disk, so neither ``ark --help`` nor a question over a
small graph pays for it.

The algorithm (Turtle & Flood's MaxScore; block bounds as in Ding & Suel's block-max indexes): terms are sorted by
their largest possible contribution. Once k documents are held, the cheapest terms whose bounds sum to less than the
k-th best score are *non-essential*: a document matching only them cannot enter, so only documents of the essential
terms are visited. For each, the essential terms' exact weights plus the non-essential terms' bounds on the block
holding that document must reach the k-th score, or the document is skipped without decoding those blocks; otherwise
the non-essential terms are looked up through their skip lists, cheapest last, stopping once the bound fails. A
document's score is summed in float32 in query-term order, as the exhaustive path adds them, so scores are
bit-identical and the result (ties by lower id) equals the exhaustive one. Bounds are float64 and inflated by
:data:`BOUND_SLACK` over float32 rounding, so a pruned document can never have reached the result. The heap is first
seeded (:mod:`ark.index._seed_kernel`) with the exactly named documents and every document of the query's rarest
terms: their rare terms' weights are added from those terms' postings; the k-th best of these partial sums (divided
by the slack) is a floor under the final k-th best score. The seeds are then looked up in the other terms a term at
a time, the term of largest bound first, one cursor per term moving forward through the sorted seeds and the fine
skip list (a tight loop: looking each seed up in every term in turn cost ~3x more per seed); a seed whose weights so
far plus the bounds of the terms left stay below the floor is dropped before the next lookup, and the floor rises
between terms to the k-th best of the weights so far. The walk passes over the seeds, and the rare terms are left
out of it. Bounds are one multiplication each: every block's largest ``tf / (tf + length norm)`` is made once per
index and model (:func:`block_ratios`). Everything from the query's term ids to the sorted result is one compiled
call: called cold (the machine busy with other work between queries), a numba call costs 10-30 us and each numpy
step a few, which was most of a query on a rare word.

Subset scoring (:func:`subset_scores`, a node's neighbours) is compiled too: per term, a cursor moves forward through
the sorted candidates, jumping whole groups by galloping over the fine skip list (every 16 postings) and decoding
deltas only from the start of a group holding a candidate up to it, instead of decoding every posting of a frequent
term (at most 15 deltas a candidate, where the 128-posting blocks took 64 on average).
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from types import ModuleType
from typing import Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from ark.arrays import F32, F64, I32, I64, U8, Bools, Ints
from ark.index.optional_kernel import required_kernel
from ark.index.postings import Tfs

Lengths: TypeAlias = npt.NDArray[np.uint8 | np.uint16 | np.int32]  # document lengths, narrowed for the kernels

BOUND_SLACK = 1e-5
# Subset scoring streams the query's postings through the candidates (:mod:`ark.index._sparse_kernel`) up to this
# many postings a candidate: 5,000 candidates on the synthetic MAG graph and at 1M Zipf documents (27 November 2026),
# medians up to 1 posting a candidate 20-41 us against 80-102 us for the candidate-driven kernel, 1-2: 75 against
# 130 us, 2-4: 179 against 188 us, 4-8: 327 against 220 us.
POSTINGS_PER_CANDIDATE = 2
_NO_MASK, _NO_DOCS = np.zeros(0, dtype=np.bool_), np.zeros(0, dtype=np.int64)


@functools.cache
def available() -> bool:
    """Whether numba is installed (checked without importing it)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def pruned_top_k(postings, terms: list[tuple[int, int]], idf: F64, k1: float, b: float, avgdl: float, k: int,
                 mask: Bools | None, named: I64, boost: np.float32, seed_postings: int) -> tuple[I64, F32]:
    """Top-``k`` (ids, scores) over ``terms`` ((term id, occurrences) in query order), descending, ties by lower id,
    in one compiled call (a call's cost, cold, is most of a rare word's query): the ``named`` documents (``boost``
    added) and those of the rarest terms (up to ``seed_postings`` postings) scored first, then the walk over the
    other terms."""
    kernel = _seed_kernel()
    skip_last, skip_ptr, step = postings.skips()
    blob, tfs, doc_lengths, block_last = _postings_arrays(postings)
    model = np.array([k1, b, avgdl])
    # numba's stubs type a compiled function's call without its parameters.
    scores, docs = kernel.top_k(  # type: ignore[call-arg]
        blob, tfs, doc_lengths, block_last, *block_ratios(postings, model), skip_last, step, postings.term_first,
        postings.term_bytes, postings.term_widths, postings.term_ptr, postings.block_ptr, skip_ptr, idf,
        np.array(terms, dtype=np.int64), model, 1.0 + BOUND_SLACK, int(k), _NO_MASK if mask is None else mask,
        np.sort(named) if len(named) else _NO_DOCS, np.float32(boost), int(seed_postings))
    return docs, scores


def _seed_kernel() -> ModuleType:
    """:mod:`ark.index._seed_kernel`, the compiled code on disk of :func:`top_k <ark.index._seed_kernel.top_k>`
    dropped first if the kernels it calls changed after it was compiled (:func:`_fresh`)."""
    return required_kernel("_seed_kernel", lambda kernel: _fresh(kernel.top_k))


def _sparse_kernel() -> ModuleType:
    """:mod:`ark.index._sparse_kernel`, checked as :func:`_seed_kernel` is."""
    return required_kernel("_sparse_kernel", lambda kernel: _fresh(kernel.posting_scores))


def _prune_kernel() -> ModuleType:
    """:mod:`ark.index._prune_kernel`, the kernels the others call."""
    return required_kernel("_prune_kernel")


class CompiledFunction(Protocol):
    """A numba dispatcher as :func:`drop_stale_cache` reads it: the Python function it compiles (and, read with
    ``getattr`` because numba keeps it private, its ``_cache``)."""

    @property
    def py_func(self) -> object: ...  # a Python function, of whatever arguments


def _fresh(entry: CompiledFunction) -> bool:
    """The on-disk code of the compiled ``entry`` flushed if :mod:`ark.index._prune_kernel` changed after it was
    compiled (whether it was): numba keys a cached function by its own file alone, so after an edit or a ``git
    pull`` that changes only the kernels it calls, ``entry`` would go on running machine code built from their old
    source."""
    return drop_stale_cache(entry, [Path(str(_prune_kernel().__file__))])


def drop_stale_cache(dispatcher: CompiledFunction, callee_sources: list[Path]) -> bool:
    """Flush the on-disk cache of the compiled function ``dispatcher`` if any of ``callee_sources`` (the files of
    the compiled functions it calls) is newer than its cache index; whether it did. A numba without that cache
    interface, or no cache yet, is left alone."""
    cache = getattr(dispatcher, "_cache", None)
    folder = getattr(cache, "cache_path", None)
    if cache is None or folder is None or not hasattr(cache, "flush"):
        return False
    func = dispatcher.py_func
    if not callable(func):  # never for a numba dispatcher
        return False
    stem, name = Path(inspect.getfile(func)).stem, getattr(func, "__name__", "")
    indexes = list(Path(folder).glob(f"{stem}.{name}-*.nbi"))
    newest = max((source.stat().st_mtime for source in callee_sources), default=0.0)
    if not indexes or min(index.stat().st_mtime for index in indexes) >= newest:
        return False
    cache.flush()
    return True


def accumulated_top_k(postings, terms: list[tuple[int, int]], idf: F64, k1: float, b: float, avgdl: float,
                      k: int, mask: Bools | None, named: I64, boost: np.float32) -> tuple[I64, F32]:
    """Top-``k`` (ids, scores) of a long query, descending, ties by lower id: every posting of every term added
    into one score per document, term by term in query order (the exhaustive pass's float32 sums), compiled; the
    ``named`` documents get ``boost``. For many terms this beats the document-at-a-time walk, whose work per
    visited document grows with the number of terms while the union of their postings covers most documents; so it
    does for a query of only frequent terms on a small index (:data:`ark.index.bm25.ACCUMULATE_MAX_DOCS`)."""
    kernel = _prune_kernel()
    tids = np.array([t for t, _ in terms], dtype=np.int64)
    blob, tfs = _postings_arrays(postings)[:2]
    norms = doc_norms(postings, np.array([k1, b, avgdl], dtype=np.float64))
    scores = np.zeros(len(norms), dtype=np.float32)
    kernel.accumulate(  # type: ignore[call-arg]
        blob, tfs, norms, _term_rows(postings, tids), idf[tids].astype(np.float64),
        np.array([c for _, c in terms], dtype=np.float64), scores)
    if len(named):
        scores[named] += boost
    top, docs = kernel.dense_top_k(scores, int(k), np.zeros(0, dtype=np.bool_) if mask is None else mask)
    order = np.lexsort((docs, -top))
    return docs[order], top[order]


def subset_scores(postings, terms: list[tuple[int, int]], idf: F64, k1: float, b: float, avgdl: float,
                  candidates: Ints, distinct: bool = True) -> F32:
    """float32 scores of ``candidates`` over ``terms`` ((term id, occurrences) in query order), equal to the numpy
    path's. When the terms hold at most :data:`POSTINGS_PER_CANDIDATE` postings a candidate, the postings are
    streamed through the candidates (:mod:`ark.index._sparse_kernel`); otherwise each term's postings are decoded
    only in the skip groups holding a candidate. The candidates are sorted and distinct unless ``distinct=False``
    (then any order, repeats allowed: sorted in the kernel)."""
    kernel = _prune_kernel()
    tids = np.array([t for t, _ in terms], dtype=np.int64)
    blob, tfs, doc_lengths = _postings_arrays(postings)[:3]
    skip_last, skip_ptr, step = postings.skips()
    rows, cands = _term_rows(postings, tids, skip_ptr), candidates.astype(np.int64, copy=False)
    weighting = (idf[tids].astype(np.float64), np.array([c for _, c in terms], dtype=np.float64),
                 np.array([k1, b, avgdl], dtype=np.float64))
    if int(rows[:, kernel.DF].sum()) <= POSTINGS_PER_CANDIDATE * len(cands):
        return _sparse_kernel().posting_scores(blob, tfs, doc_lengths, rows, *weighting, cands)  # type: ignore[call-arg]
    args = (blob, tfs, doc_lengths, np.asarray(skip_last), rows, step, *weighting, cands)
    if distinct:
        return kernel.subset_scores(*args)  # type: ignore[call-arg]
    return kernel.candidate_scores(*args, len(doc_lengths))  # type: ignore[call-arg]


def _postings_arrays(postings) -> tuple[U8, Tfs, Lengths, I32]:
    """The kernels' postings arrays, made once per index (kept on it): plain arrays, and the document lengths in
    the narrowest unsigned type that holds them (:func:`narrow_lengths`)."""
    arrays = postings.__dict__.get("_kernel_arrays")
    if arrays is None:
        arrays = postings.__dict__["_kernel_arrays"] = (
            np.asarray(postings.doc_deltas), np.asarray(postings.tfs), narrow_lengths(postings.doc_lengths),
            np.asarray(postings.block_last))
    return arrays


def block_ratios(postings, model: F64) -> tuple[F32, F32]:
    """Each block's and each term's largest ``tf / (tf + length norm)`` under ``model`` ((k1, b, avgdl)), float32
    rounded up (:func:`ark.index._prune_kernel.block_ratios`), made once per index and model and kept on it: a
    bound is then one multiplication, where it took a division per block (a frequent term's every block, for its
    largest bound, in each query: ~15% of a median 3M-document query). 4 bytes a block: ~3% of the postings."""
    key = tuple(model.tolist())  # floats, made in C (a generator of float() took ~2 us a query)
    cached = postings.__dict__.get("_block_ratios")
    if cached is None or cached[0] != key:
        kernel = _prune_kernel()
        ratios = kernel.block_ratios(  # type: ignore[call-arg]
            np.asarray(postings.block_max_tf), np.asarray(postings.block_min_dl), np.asarray(postings.block_ptr),
            np.asarray(model, dtype=np.float64))
        cached = postings.__dict__["_block_ratios"] = (key, ratios)
    return cached[1]


def doc_norms(postings, model: F64) -> F64:
    """Every document's length normalisation under ``model`` ((k1, b, avgdl)), float64, made once per index and
    model and kept on it (8 bytes a document): the accumulated pass reads one a posting instead of computing it
    (a division) from the document's length."""
    key = tuple(model.tolist())  # floats, made in C (a generator of float() took ~2 us a query)
    cached = postings.__dict__.get("_doc_norms")
    if cached is None or cached[0] != key:
        kernel = _prune_kernel()
        norms = kernel.doc_norms(np.asarray(postings.doc_lengths), np.asarray(model, dtype=np.float64))  # type: ignore[call-arg]
        cached = postings.__dict__["_doc_norms"] = (key, norms)
    return cached[1]


def narrow_lengths(doc_lengths: I32) -> Lengths:
    """``doc_lengths`` in the narrowest unsigned integer type that holds them (the same values, so the same
    scores): scoring reads one length per visited document, at random, and a byte a document (documents of under
    256 tokens) keeps 4x more of them in the caches than int32 (3M documents: 12 MB -> 3 MB; 14% off the median
    query at 3M, 21% at 1M)."""
    lengths = np.asarray(doc_lengths)
    if not len(lengths) or lengths.dtype.kind not in "iu" or lengths.min() < 0:
        return lengths
    largest = int(lengths.max())
    for dtype in (np.uint8, np.uint16):
        if largest <= np.iinfo(dtype).max:
            return lengths.astype(dtype)
    return lengths


def _term_rows(postings, tids: I64, groups: I64 | None = None) -> I64:
    """The kernel's per-term rows (first document, first byte, width, first posting, df, first block, blocks, first
    group and groups of the finest skip list); with ``groups``, the term's groups of that skip list instead of its
    blocks. Compiled: numpy's nine gathers and a stack took ~25 us a query."""
    kernel = _prune_kernel()
    skips = postings.skips()[1]
    return kernel.term_rows(  # type: ignore[call-arg]
        tids, np.asarray(postings.term_first), np.asarray(postings.term_bytes), np.asarray(postings.term_widths),
        np.asarray(postings.term_ptr), postings.block_ptr if groups is None else groups, skips)
