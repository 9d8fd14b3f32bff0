"""How a BM25 build spends a memory budget: the size of its chunks, how many are in flight, the merge's batches.

A build's working memory is its chunks of documents being split, looked up and counted (about
:data:`BYTES_PER_CHUNK_CHAR` bytes a character of text at the peak with the compiled kernels,
:data:`BYTES_PER_CHUNK_CHAR_NUMPY` with the Arrow, numpy and scipy paths) and, once every chunk is spilled, the
merge's batches of postings (about :data:`BYTES_PER_MERGE_POSTING` bytes a posting). The two phases follow each
other, so each may use the whole budget. A pipelined build (:data:`~ark.index.bm25_build.PIPELINE_WORKERS` threads)
holds about :data:`PIPELINED_CHUNKS` chunks at once; it is chosen only when chunks of at least
:data:`MIN_PIPELINED_CHARS` characters then fit (smaller ones make the merge read more runs than the threads win).

Outside the budget: the interpreter and its libraries (numba, where a build uses its kernels, ~150 MB of resident
memory once they are loaded: :func:`~ark.index.optional_kernel.build_kernels_enabled`), the vocabulary (a few tens
of bytes a distinct term) and 4 bytes a document. The files written do not depend on the budget (term ids follow
the first occurrence of each term in the corpus).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ark.index.optional_kernel import build_kernels_enabled
from ark.storage.memory import DEFAULT_MEMORY_BUDGET, MEMORY_VARIABLE, default_memory_budget, release_freed_memory

__all__ = ["DEFAULT_MEMORY_BUDGET", "MEMORY_VARIABLE", "BuildBudget", "default_memory_budget", "release_freed_memory",
           "released"]

BYTES_PER_CHUNK_CHAR = 16  # split + lookup + count of a chunk, per character of its text (measured at its peak)
BYTES_PER_CHUNK_CHAR_NUMPY = 32  # the same without the compiled kernels (scipy's count holds ~3x the counting sort's)
BYTES_PER_MERGE_POSTING = 32  # a merge batch's run slices, gathered arrays and encoded bytes, per posting
PIPELINED_CHUNKS = 3  # chunks in flight when splitting, looking up and spilling overlap in threads
MIN_PIPELINED_CHARS = 2_000_000  # ~5,000 documents of 400 characters
MIN_CHUNK_CHARS = 4_096
MIN_MERGE_POSTINGS = 1 << 16
MERGE_POSTINGS_PER_CHUNK_DOC = 64  # and at most this many postings per document of a chunk (25,000 docs: 1.6M)
DEFAULT_CHUNK_DOCS = 25_000

_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass(frozen=True)
class BuildBudget:
    """A build's chunking, derived from its memory budget (:meth:`of`)."""

    memory_budget: int  # bytes of working memory aimed at
    chunk_docs: int  # at most this many documents a chunk
    chunk_chars: int  # and at most this many characters (at least one document)
    workers: int  # threads of the pipelined steps (0: every step in the calling thread)
    merge_postings: int  # postings gathered and encoded at a time by each merge thread

    @classmethod
    def of(cls, memory_budget: int | None = None, chunk_docs: int | None = None, workers: int = 2,
           compiled: bool | None = None) -> BuildBudget:
        """The chunking that keeps a build's working memory within ``memory_budget`` bytes (default
        :func:`default_memory_budget`), with at most ``chunk_docs`` documents a chunk and up to ``workers`` threads;
        ``compiled``: whether the build's kernels count (default :func:`build_kernels_enabled`)."""
        budget = default_memory_budget() if memory_budget is None else memory_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 2**20:
            raise ValueError(f"memory_budget must be a number of bytes of at least 1 MiB (2**20), got {budget!r}")
        docs = DEFAULT_CHUNK_DOCS if chunk_docs is None else chunk_docs
        if isinstance(docs, bool) or not isinstance(docs, int) or docs < 1:
            raise ValueError(f"chunk_size must be a positive number of documents, got {docs!r}")
        per_char = BYTES_PER_CHUNK_CHAR if (build_kernels_enabled() if compiled is None else compiled) \
            else BYTES_PER_CHUNK_CHAR_NUMPY
        chars = budget // (per_char * PIPELINED_CHUNKS)
        if workers <= 0 or chars < MIN_PIPELINED_CHARS:
            workers, chars = 0, budget // per_char
        threads = max(workers, 1) + 1  # batches in flight: each thread's and the one being written
        merge = min(max(budget // (BYTES_PER_MERGE_POSTING * threads), MIN_MERGE_POSTINGS),
                    docs * MERGE_POSTINGS_PER_CHUNK_DOC)
        return cls(budget, docs, max(chars, MIN_CHUNK_CHARS), workers, merge)


def released(work: Callable[[_T], _R], workers: int) -> Callable[[_T], _R]:
    """``work`` followed by :func:`release_freed_memory` in the thread that ran it when it runs in one of
    ``workers`` threads (Arrow's pool keeps a heap per thread: a worker's temporaries are handed back by the
    worker); ``work`` itself when there are none (the calling thread releases once a chunk or batch)."""
    if workers <= 0:
        return work

    def run(item: _T) -> _R:
        try:
            return work(item)
        finally:
            release_freed_memory()
    return run
