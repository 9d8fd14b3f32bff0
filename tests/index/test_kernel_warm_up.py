"""The compiled kernels of a large index load on a background thread when an agent's tools bind it, once per index,
and searching meanwhile or afterwards gives the results of a cold index."""

from __future__ import annotations

import numpy as np
import pytest

from ark.index import BM25Index, bm25, kernel_warm_up

pytest.importorskip("numba")


def _index(docs: int = 400) -> BM25Index:
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(60)]
    return BM25Index.build([" ".join(rng.choice(words, 8)) for _ in range(docs)])


def test_a_large_index_warms_up_once_on_a_thread_and_answers_the_same(monkeypatch):
    monkeypatch.setattr(bm25, "PRUNE_MIN_DOCS", 100)
    index = _index()
    expected = index.search("w1 w7 w30", 10)
    thread = kernel_warm_up.start(index)
    assert thread is not None and thread.daemon and thread.name == "ark-bm25-warm-up"
    during = index.search("w1 w7 w30", 10)  # a query may come before the warm-up ends
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert kernel_warm_up.start(index) is None  # once per index
    for found in (during, index.search("w1 w7 w30", 10)):
        assert np.array_equal(found[0], expected[0]) and np.array_equal(found[1], expected[1])


def test_a_small_index_needs_no_warm_up(monkeypatch):
    monkeypatch.setattr(bm25, "PRUNE_MIN_DOCS", 10**9)
    assert kernel_warm_up.start(_index(50)) is None
