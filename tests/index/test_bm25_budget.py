"""A BM25 build's memory budget sizes its chunks, threads and merge batches, and never changes the files written."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import ark.index.bm25_build as bm25_build
import ark.index.bm25_chunks as bm25_chunks
from ark.index import BM25Index, Tokenizer
from ark.index.bm25_budget import (
    BYTES_PER_CHUNK_CHAR,
    BYTES_PER_MERGE_POSTING,
    DEFAULT_MEMORY_BUDGET,
    MEMORY_VARIABLE,
    PIPELINED_CHUNKS,
    BuildBudget,
    default_memory_budget,
)


def _corpus(n: int) -> list[str]:
    """Zipf-like documents mixing short and long ASCII words, non-ASCII words (their tokens are split apart from the
    ASCII ones), stopwords, one-letter tokens and empty documents."""
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(200)] + [f"longerword{i}" for i in range(60)] + ["The", "of", "a", "x"]
    words += ["Über", "café", "naïve", "straße", "ΣΊΣΥΦΟΣ", "東京", "running", "runs", "runner"]
    weights = 1.0 / np.arange(1, len(words) + 1)
    docs = [" ".join(rng.choice(words, rng.integers(0, 25), p=weights / weights.sum())) for _ in range(n)]
    docs[3] = ""
    return docs


def _digests(index: BM25Index, folder) -> dict[str, str]:
    index.save(folder)
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("stemmer", [None, "english"])
def test_the_files_are_the_same_whatever_the_budget_and_the_chunk_size(tmp_path, monkeypatch, stemmer):
    """Term ids follow each term's first occurrence in the corpus, not the chunks: a build within 1 MiB, one of
    one-document chunks and one of a single chunk write the same bytes (plain and fielded). Before, a term's id
    depended on which chunk first held it and on where in its chunk's dictionary it came."""
    pytest.importorskip("Stemmer") if stemmer else None
    docs = _corpus(400)
    records = [(d[:9], d) for d in docs]
    seen: dict[str, list[dict[str, str]]] = {"plain": [], "fielded": []}
    settings = [dict(chunk_size=1), dict(chunk_size=7), dict(memory_budget=2**20), dict(chunk_size=10**6)]
    for i, options in enumerate(settings):
        monkeypatch.setattr(bm25_build, "PIPELINE_WORKERS", i % 3)
        tokenizer = Tokenizer(stemmer=stemmer)
        seen["plain"].append(_digests(BM25Index.build(docs, tokenizer=tokenizer, **options), tmp_path / f"p{i}"))
        fielded = BM25Index.build_fielded(records, ("names", "text"), (2.0, 1.0), (0.5, 0.75), tokenizer=tokenizer,
                                          **options)
        seen["fielded"].append(_digests(fielded, tmp_path / f"f{i}"))
    for kind, digests in seen.items():
        assert all(d == digests[0] for d in digests[1:]), kind


def test_term_ids_are_ranks_of_first_occurrence():
    """The first document's terms come first, in their order, then each later document's new terms (before, a
    chunk's short ASCII words were numbered before its long ones: beta before alphabetical)."""
    index = BM25Index.build(["zeta alpha zeta", "", "alphabetical beta alpha", "Ωmega beta gamma"], chunk_size=2)
    assert list(index.terms) == ["zeta", "alpha", "alphabetical", "beta", "ωmega", "gamma"]


def test_a_smaller_budget_gives_smaller_chunks_and_merge_batches_within_it():
    budgets = [BuildBudget.of(mb * 2**20, 10**9) for mb in (1, 8, 32, 128, 256, 1024)]
    for smaller, larger in zip(budgets, budgets[1:], strict=False):
        assert smaller.chunk_chars * (PIPELINED_CHUNKS if smaller.workers else 1) <= \
            larger.chunk_chars * (PIPELINED_CHUNKS if larger.workers else 1)
        assert smaller.merge_postings <= larger.merge_postings
    for budget in budgets[1:]:
        in_flight = PIPELINED_CHUNKS if budget.workers else 1
        assert budget.chunk_chars * in_flight * BYTES_PER_CHUNK_CHAR <= budget.memory_budget
        assert budget.merge_postings * (max(budget.workers, 1) + 1) * BYTES_PER_MERGE_POSTING <= budget.memory_budget
    assert budgets[0].workers == 0 and budgets[-1].workers == 2  # threads only where their chunks fit
    assert BuildBudget.of().memory_budget == DEFAULT_MEMORY_BUDGET
    assert BuildBudget.of(chunk_docs=10).chunk_docs == 10


@pytest.mark.parametrize(("options", "message"), [
    (dict(memory_budget=1000), "memory_budget must be a number of bytes of at least 1 MiB"),
    (dict(memory_budget=2.5e8), "got 250000000.0"),
    (dict(chunk_size=0), "chunk_size must be a positive number of documents, got 0"),
])
def test_a_bad_budget_or_chunk_size_is_an_error_naming_it(options, message):
    with pytest.raises(ValueError, match=message):
        BM25Index.build(["a document"], **options)


def test_the_compiled_count_gives_the_arrays_of_scipys():
    """With numba a chunk is counted by a counting sort (a third of scipy's memory): the same arrays and dtypes."""
    pytest.importorskip("numba")
    tokenizer, vocab = Tokenizer(), bm25_build._Vocabulary(Tokenizer())
    docs = [d for d in _corpus(300) if d.isascii()]  # ASCII chunks: tokens in document order, the compiled path
    for chunk in (docs[:120], docs[120:], [""], ["the of a"]):
        batch = tokenizer.split(chunk)
        ids = vocab.ids_of(batch.dictionary, batch.packed)
        compiled = bm25_chunks._term_major_counts(batch, ids, len(vocab.terms))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(bm25_chunks, "_count_kernel", lambda: None)
            reference = bm25_chunks._term_major_counts(batch, ids, len(vocab.terms))
        for name in ("ptr", "docs", "tf", "lengths"):
            got, want = getattr(compiled, name), getattr(reference, name)
            assert got.dtype == want.dtype and got.shape == want.shape, name
            np.testing.assert_array_equal(got, want)


def test_the_default_budget_comes_from_the_environment_when_set(monkeypatch):
    assert default_memory_budget({}) == DEFAULT_MEMORY_BUDGET
    assert default_memory_budget({MEMORY_VARIABLE: "48"}) == 48 * 2**20
    monkeypatch.setenv(MEMORY_VARIABLE, "2")
    assert BuildBudget.of().memory_budget == 2 * 2**20
    for bad in ("lots", "0.5", "-3", "nan"):
        with pytest.raises(ValueError, match=f"ARK_BUILD_MEMORY_MB must be a number of MiB, at least 1; got '{bad}'"):
            default_memory_budget({MEMORY_VARIABLE: bad})
