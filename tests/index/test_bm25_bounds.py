"""The pruned search's block bounds: each block's ratio ``tf / (tf + length norm)`` bounds every posting's in it
(float32 rounded up, never down), each term's is its blocks' largest, and the ratios follow the model they were
made for (a search under another avgdl must not reuse them)."""

from __future__ import annotations

import numpy as np
import pytest

from ark.index import BM25Index

pytest.importorskip("numba")


def _index() -> BM25Index:
    rng = np.random.default_rng(5)
    words = [f"w{i}x" for i in range(60)]
    p = 1.0 / np.arange(1, 61)
    docs = [" ".join(rng.choice(words, int(rng.integers(1, 80)), p=p / p.sum())) for _ in range(3000)]
    return BM25Index.build(docs, chunk_size=700)


def test_block_ratios_bound_every_posting_and_are_rounded_up():
    from ark.index import bm25_prune

    index = _index()
    postings = index.postings
    model = np.array([index.k1, index.b, index._avgdl])
    block_ratio, term_ratio = bm25_prune.block_ratios(postings, model)
    assert block_ratio.dtype == np.float32 and len(block_ratio) == len(postings.block_max_tf)
    lengths = np.asarray(index.doc_lengths, dtype=np.float64)
    checked = 0
    for term in range(postings.num_terms):
        docs, tf = postings.docs(term), np.asarray(postings.tf(term), dtype=np.float64)
        exact = tf / (tf + index.k1 * (1.0 - index.b + index.b * lengths[docs] / index._avgdl))
        blocks = np.arange(postings.block_ptr[term], postings.block_ptr[term + 1])
        owner = np.repeat(blocks, np.diff(np.append(np.arange(0, len(docs), 128), len(docs))))
        assert np.all(exact <= block_ratio[owner].astype(np.float64))
        # tight: the float32 just below each block's ratio is below its largest frequency at its shortest length
        top_tf = np.asarray(postings.block_max_tf, dtype=np.float64)[blocks]
        shortest = np.asarray(postings.block_min_dl, dtype=np.float64)[blocks]
        largest = top_tf / (top_tf + index.k1 * (1.0 - index.b + index.b * shortest / index._avgdl))
        assert np.all(block_ratio[blocks].astype(np.float64) >= largest)
        assert np.all(np.nextafter(block_ratio[blocks], np.float32(0)).astype(np.float64) < largest)
        assert term_ratio[term] == (block_ratio[blocks].max() if len(blocks) else 0)
        checked += len(docs)
    assert checked == len(postings.tfs)


def test_block_ratios_are_made_again_for_another_model():
    from ark.index import bm25_prune

    index = _index()
    first = bm25_prune.block_ratios(index.postings, np.array([1.5, 0.75, index._avgdl]))
    other = bm25_prune.block_ratios(index.postings, np.array([1.5, 0.75, index._avgdl * 2]))
    assert np.any(other[0] != first[0])
    again = bm25_prune.block_ratios(index.postings, np.array([1.5, 0.75, index._avgdl]))
    np.testing.assert_array_equal(again[0], first[0])
