"""The working-memory budget of a build (``$ARK_BUILD_MEMORY_MB``), and handing freed memory back to the system.

One budget sizes the chunks of every build that can work in pieces: the BM25 index (:mod:`ark.index.bm25_budget`)
and the import of a graph folder (:mod:`ark.loaders.tabular_stream`). The files a build writes do not depend on it.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Callable, Mapping

DEFAULT_MEMORY_BUDGET = 256 * 2**20
MEMORY_VARIABLE = "ARK_BUILD_MEMORY_MB"  # the default budget, in MiB, where the caller gives none


def default_memory_budget(environ: Mapping[str, str] | None = None) -> int:
    """A build's budget when none is given: ``$ARK_BUILD_MEMORY_MB`` MiB (e.g. for the graph indexes ``ark`` builds
    itself), else :data:`DEFAULT_MEMORY_BUDGET`. The files do not depend on it, so caches stay valid."""
    value = (os.environ if environ is None else environ).get(MEMORY_VARIABLE, "").strip()
    if not value:
        return DEFAULT_MEMORY_BUDGET
    try:
        megabytes = float(value)
    except ValueError:
        megabytes = float("nan")
    if not megabytes >= 1:
        raise ValueError(f"{MEMORY_VARIABLE} must be a number of MiB, at least 1; got {value!r}")
    return int(megabytes * 2**20)


def release_freed_memory() -> None:
    """Hand the memory freed by a finished chunk or batch back to the system: Arrow's pool (mimalloc or jemalloc)
    and glibc's ``malloc_trim`` otherwise keep it for reuse, and a build that frees and reallocates a chunk's
    arrays every chunk would peak at the live memory plus what the allocators hold (~35 MB a chunk of 10,000
    documents, measured). A few milliseconds a call; a no-op where glibc is absent."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None (another C library, another system)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
