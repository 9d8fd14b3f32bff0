"""numba keys a cached compiled function by its own source file: the pruned search's entry point is flushed when a
kernel it calls changed after it was cached, or it would keep running code built from the old source."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from ark.index import bm25_prune


def compiled_entry() -> None:
    """Stands for a compiled function (its name and file name its cache index)."""


def _dispatcher(folder: Path) -> SimpleNamespace:
    flushed: list[int] = []
    cache = SimpleNamespace(cache_path=str(folder), flush=lambda: flushed.append(1))
    return SimpleNamespace(_cache=cache, py_func=compiled_entry, flushed=flushed)


def test_a_cache_older_than_a_callee_is_flushed_and_a_newer_one_kept(tmp_path):
    callee = tmp_path / "kernel.py"
    callee.write_text("# the callee\n")
    index = tmp_path / f"{Path(__file__).stem}.compiled_entry-17.py311.nbi"
    index.write_bytes(b"index")
    now = time.time()
    os.utime(index, (now - 100, now - 100))
    os.utime(callee, (now, now))
    stale = _dispatcher(tmp_path)
    assert bm25_prune.drop_stale_cache(stale, [callee]) and stale.flushed == [1]
    os.utime(index, (now + 5, now + 5))
    fresh = _dispatcher(tmp_path)
    assert not bm25_prune.drop_stale_cache(fresh, [callee]) and fresh.flushed == []
    index.unlink()
    assert not bm25_prune.drop_stale_cache(_dispatcher(tmp_path), [callee])  # nothing cached yet
    assert not bm25_prune.drop_stale_cache(SimpleNamespace(py_func=compiled_entry), [callee])  # no cache interface


def test_the_real_entry_points_cache_index_is_the_one_checked(monkeypatch):
    """After a pruned search and a postings-driven subset scoring, the files the guard looks for exist where numba
    keeps top_k's and posting_scores's caches (so a numba that names its index files otherwise fails here, not
    silently)."""
    if not bm25_prune.available():
        pytest.skip("numba is not installed")
    import ark.index.bm25 as bm25_module
    from ark.index import BM25Index

    monkeypatch.setattr(bm25_module, "PRUNE_MIN_DOCS", 0)
    rng = np.random.default_rng(3)
    index = BM25Index.build([" ".join(rng.choice(["a1x", "b2x", "c3x", "d4x"], 6)) for _ in range(300)] + ["e5x"])
    assert len(index.search("a1x c3x", 5)[0]) == 5
    assert index.score("e5x", np.arange(10))[0] == 0  # one posting, ten candidates: the postings-driven kernel
    for module, entry in ((bm25_prune._seed_kernel(), "top_k"), (bm25_prune._sparse_kernel(), "posting_scores")):
        folder = Path(getattr(module, entry)._cache.cache_path)
        stem = module.__name__.rsplit(".", 1)[1]
        assert list(folder.glob(f"{stem}.{entry}-*.nbi")), sorted(p.name for p in folder.glob("*.nbi"))
