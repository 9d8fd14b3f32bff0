"""Building in bounded memory: chunks are bounded by their text, not only by their number of documents."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ark.index import BM25Index
from ark.index.bm25_chunks import CHUNK_BYTES_PER_DOC, _chunks, _chunks_of_records


def _texts(seed: int, n: int) -> list[str]:
    """Short and very long documents mixed (a graph's names beside its papers' abstracts)."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(300)]
    lengths = np.where(rng.random(n) < 0.2, rng.integers(300, 900, n), rng.integers(0, 12, n))
    return [" ".join(rng.choice(words, int(m))) for m in lengths]


@pytest.mark.parametrize("arrow", [False, True])
def test_chunks_stop_at_their_text_budget_and_keep_every_document_in_order(arrow):
    texts = _texts(0, 400)
    size = 20
    chunks = list(_chunks(pa.array(texts) if arrow else iter(texts), size))
    flat = [t for c in chunks for t in (c.to_pylist() if arrow else c)]
    assert flat == texts
    for chunk in chunks:
        lengths = [len(t.encode()) for t in (chunk.to_pylist() if arrow else chunk)]
        assert len(lengths) <= size
        assert len(lengths) == 1 or sum(lengths) <= size * CHUNK_BYTES_PER_DOC
    assert len(chunks) > len(texts) // size  # the long documents made shorter chunks
    huge = ["x" * (size * CHUNK_BYTES_PER_DOC * 2)] + texts[:5]  # a document over the budget: a chunk of its own
    assert [len(c) for c in _chunks(huge, size)][0] == 1


def test_record_chunks_count_every_field():
    texts = _texts(1, 300)
    records = [(t[:50], t) for t in texts]
    chunks = list(_chunks_of_records(records, 20, 2))
    assert [tuple(r) for c in chunks for r in c] == records
    assert all(len(c) == 1 or sum(len(a) + len(b) for a, b in c) <= 20 * CHUNK_BYTES_PER_DOC for c in chunks)
    assert len(chunks) > len(records) // 20


def test_an_index_built_in_small_chunks_equals_one_built_at_once():
    texts = _texts(2, 600)
    small, whole = BM25Index.build(texts, chunk_size=7), BM25Index.build(texts, chunk_size=10**6)
    assert list(small.terms) == list(whole.terms)
    np.testing.assert_array_equal(small.doc_lengths, whole.doc_lengths)
    everything = np.arange(len(texts))
    for query in ("w1 w7", "w250 w3 w3", "w299"):
        np.testing.assert_array_equal(small.score(query, everything), whole.score(query, everything))
        for got, expected in zip(small.search(query, 15), whole.search(query, 15), strict=True):
            np.testing.assert_array_equal(got, expected)
