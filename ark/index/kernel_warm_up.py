"""Loading a large BM25 index's compiled kernels before its first query, off the caller's thread.

A large index (:data:`~ark.index.bm25.PRUNE_MIN_DOCS` documents on) is searched by numba kernels
(:mod:`ark.index.bm25_prune`), imported and loaded from numba's disk cache on first use, and its block bounds are made
on the first pruned query. Paid inside the first tool call, that was the stall of one call in 25 on a 1M-node graph
(issue 50: 1.2 s p99; measured here 0.58 CPU-s, 2.4 s wall on a loaded 2-core machine, almost all of it
``import numba`` and the cached machine code). :func:`start` runs one query of each compiled path on a daemon thread
as soon as an agent's tools are bound to the index, while the first model request is in flight; a query that comes
first waits only for what is left (numba's compiler lock), and gets the same result.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

import numpy as np

from .optional_kernel import optional_kernel

if TYPE_CHECKING:
    from .bm25 import BM25Index

_started: weakref.WeakSet[BM25Index] = weakref.WeakSet()  # the indexes whose warm-up has begun
_lock = threading.Lock()


def warm_up(index: BM25Index) -> None:
    """Run each compiled path of ``index`` (a :class:`~ark.index.bm25.BM25Index`) once on its first terms: the
    vocabulary lookup, the pruned top-k, the long-query pass and both subset scorers; and the search of a tool
    call's snippets (:mod:`ark.index._snippet_kernel`). A no-op on a small index."""
    from . import bm25, bm25_prune

    postings = index.postings
    if not index._prunes() or postings.num_terms == 0:
        return
    index._query_terms("warm up")
    index._exactly_named("warm up")  # its table's buckets made
    first = [(0, 1)]
    no_docs = np.zeros(0, dtype=np.int64)
    index._pruned_search(first, no_docs, 1, None)
    many = [(t, 1) for t in range(min(postings.num_terms, bm25.LONG_QUERY_TERMS))]
    bm25_prune.accumulated_top_k(postings, many, index._idf, index.k1, index.b, index._avgdl, 1, None, no_docs,
                                 np.float32(1))
    few = np.arange(min(index.num_docs, 2), dtype=np.int64)
    for terms in (first, many):  # few postings a candidate: streamed; many: through the skip lists
        for distinct in (True, False):
            bm25_prune.subset_scores(postings, terms, index._idf, index.k1, index.b, index._avgdl, few, distinct)
    # A tool call's snippets over this index's hits: the compiled search, handed to tool calls once loaded.
    optional_kernel("_snippet_kernel", lambda kernel: kernel.warm_up())


def start(index: object) -> threading.Thread | None:
    """:func:`warm_up` on a daemon thread, once per index object (None when already started or not needed)."""
    from . import bm25

    if not isinstance(index, bm25.BM25Index) or not index._prunes():
        return None
    with _lock:
        if index in _started:
            return None
        _started.add(index)
    thread = threading.Thread(target=warm_up, args=(index,), name="ark-bm25-warm-up", daemon=True)
    thread.start()
    return thread
