"""The approximate (faiss IVF) dense path against the exact numpy path, its oracle."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("faiss")

from ark.index import ann  # noqa: E402
from ark.index.ann import IVFIndex, exact_top_k, recall_at_k  # noqa: E402
from ark.index.dense import DenseIndex  # noqa: E402
from ark.index.topk import top_k  # noqa: E402


def clustered(n: int, draw: int = 0, dim: int = 32, clusters: int = 40, spread: float = 0.35) -> np.ndarray:
    """Unit vectors around fixed random unit centres (a small copy of the benchmark's synthetic vectors); ``draw``
    picks the sample of points, the centres are always the same."""
    centres = np.random.default_rng(0).standard_normal((clusters, dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    rng = np.random.default_rng([1, draw])
    points = centres[rng.integers(0, clusters, n)] + spread * rng.standard_normal((n, dim)) / np.sqrt(dim)
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def data():
    vectors = clustered(4000)
    queries = clustered(60, draw=1)  # fresh points around the same centres
    return vectors, queries, IVFIndex.build(vectors)


def test_exact_top_k_matches_brute_force():
    vectors, queries = clustered(700), clustered(5, draw=3)
    truth = exact_top_k(vectors, queries, 10, block=128)
    for query, ids in zip(queries, truth, strict=True):
        assert ids.tolist() == np.argsort(-(vectors @ query), kind="stable")[:10].tolist()


def test_calibrated_recall_and_exact_scores(data):
    vectors, queries, index = data
    assert index.meta["calibration"]["recall"] >= 0.99 and 1 <= index.nprobe < index.nlist
    found = np.stack([index.search(vectors, q, 20)[0] for q in queries])
    assert recall_at_k(found, exact_top_k(vectors, queries, 20)) >= 0.98
    ids, scores = index.search(vectors, queries[0], 20)
    np.testing.assert_array_equal(scores, (vectors[ids] @ queries[0]).astype(np.float32))  # exact scores
    assert np.all(np.diff(scores) <= 0)


def test_masks_small_exact_wide_filtered(data, monkeypatch):
    vectors, queries, index = data
    small = np.zeros(len(vectors), dtype=bool)
    small[::97] = True
    ids, scores = index.search(vectors, queries[1], 10, small)
    kept = np.flatnonzero(small)
    expected = top_k(kept, vectors[kept] @ queries[1], 10)
    assert ids.tolist() == expected[0].tolist()
    monkeypatch.setattr(ann, "EXACT_SUBSET", 10)  # force the bitmap path
    wide = np.arange(len(vectors)) % 3 != 0
    found = np.stack([index.search(vectors, q, 20, wide)[0] for q in queries])
    assert wide[found.ravel()].all()
    truth = np.stack([top_k(np.flatnonzero(wide), vectors[wide] @ q, 20)[0] for q in queries])
    assert recall_at_k(found, truth) >= 0.98


def test_save_load_and_staleness(data, tmp_path):
    vectors, queries, index = data
    index.save(tmp_path)
    loaded = IVFIndex.load(tmp_path, len(vectors))
    assert loaded is not None and loaded.nprobe == index.nprobe
    assert loaded.search(vectors, queries[2], 20)[0].tolist() == index.search(vectors, queries[2], 20)[0].tolist()
    assert IVFIndex.load(tmp_path, len(vectors) + 1) is None  # built for other embeddings
    (tmp_path / ann.META_FILE).unlink()
    assert IVFIndex.load(tmp_path, len(vectors)) is None  # incomplete save


class FixedQueries:
    """A stand-in encoder: the query text names the row of ``queries`` to return."""

    def __init__(self, queries: np.ndarray) -> None:
        self.queries = queries

    def encode(self, texts, **_kwargs):
        return self.queries[[int(t) for t in texts]]


def test_dense_index_switches_to_ivf_above_the_threshold_and_saves_it(data, tmp_path, monkeypatch):
    vectors, queries, _ = data
    encoder = FixedQueries(queries)
    exact = DenseIndex(vectors, encoder=encoder, ann="exact")
    auto = DenseIndex(vectors, encoder=encoder)
    assert not auto.uses_approximate_search()  # 4,000 documents: below ANN_MIN_DOCS
    monkeypatch.setattr(ann, "ANN_MIN_DOCS", 1000)
    assert auto.uses_approximate_search()
    truth = np.stack([exact.search(str(i), 20)[0] for i in range(len(queries))])
    found = np.stack([auto.search(str(i), 20)[0] for i in range(len(queries))])
    assert recall_at_k(found, truth) >= 0.98
    auto.save(tmp_path / "dense")
    assert (tmp_path / "dense" / ann.INDEX_FILE).is_file()
    loaded = DenseIndex.load(tmp_path / "dense")
    loaded._encoder = encoder
    monkeypatch.setattr(IVFIndex, "build", classmethod(lambda *a, **k: pytest.fail("rebuilt a saved index")))
    assert loaded.search("3", 20)[0].tolist() == auto.search("3", 20)[0].tolist()
    with pytest.raises(ValueError, match="unknown ann 'hnsw'"):
        DenseIndex(vectors, ann="hnsw")
