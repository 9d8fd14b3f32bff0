"""The pipelined BM25 build (worker threads splitting, counting, spilling and encoding) writes the very files a build
with every step in one thread writes: plain and fielded, stemmed, many small runs and merge batches."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import ark.index.bm25_budget as bm25_budget
import ark.index.bm25_build as bm25_build
from ark.index import BM25Index, Tokenizer


def _corpus(seed: int, n: int) -> list:
    """Zipf-like documents: short and long (over 8 bytes) ASCII words, non-ASCII words, stopwords, empty texts."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(300)] + [f"longerword{i}" for i in range(100)] + ["The", "of", "a", "x"]
    words += ["Über", "café", "naïve", "straße", "ΣΊΣΥΦΟΣ", "東京", "running", "runs", "runner"]
    weights = 1.0 / np.arange(1, len(words) + 1)
    docs: list = [" ".join(rng.choice(words, rng.integers(0, 30), p=weights / weights.sum())) for _ in range(n)]
    docs[5], docs[17] = None, 42
    return docs


def _digests(index: BM25Index, folder) -> dict[str, str]:
    index.save(folder)
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def _serial_and_pipelined(monkeypatch, tmp_path, build) -> tuple[dict, dict]:
    monkeypatch.setattr(bm25_budget, "MERGE_POSTINGS_PER_CHUNK_DOC", 4)  # many merge batches in flight
    monkeypatch.setattr(bm25_build, "PIPELINE_WORKERS", 0)
    serial = _digests(build(), tmp_path / "serial")
    monkeypatch.setattr(bm25_build, "PIPELINE_WORKERS", 3)
    pipelined = _digests(build(), tmp_path / "pipelined")
    return serial, pipelined


@pytest.mark.parametrize(("chunk_size", "stemmer"), [(2, None), (25, None), (64, "english"), (10_000, None)])
def test_pipelined_build_writes_the_files_of_a_serial_build(monkeypatch, tmp_path, chunk_size, stemmer):
    docs = _corpus(1, 300 if chunk_size > 2 else 40)
    pytest.importorskip("Stemmer") if stemmer else None

    def build() -> BM25Index:
        return BM25Index.build(docs, tokenizer=Tokenizer(stemmer=stemmer), chunk_size=chunk_size)

    serial, pipelined = _serial_and_pipelined(monkeypatch, tmp_path, build)
    assert "doc_deltas.bin" in serial and serial == pipelined


@pytest.mark.parametrize("chunk_size", [1, 25, 10_000])
def test_pipelined_fielded_build_writes_the_files_of_a_serial_build(monkeypatch, tmp_path, chunk_size):
    n = 300 if chunk_size > 1 else 30
    texts, names = _corpus(2, n), _corpus(3, n)
    docs = [(str(name or ""), str(text or "")) for name, text in zip(names, texts, strict=True)]

    def build() -> BM25Index:
        return BM25Index.build_fielded(docs, ("names", "text"), (2.0, 1.0), (0.5, 0.75), chunk_size=chunk_size)

    serial, pipelined = _serial_and_pipelined(monkeypatch, tmp_path, build)
    assert "tfs.bin" in serial and serial == pipelined


def test_a_failing_document_source_fails_the_pipelined_build(monkeypatch):
    def docs():
        yield from ["alpha beta"] * 10
        raise OSError("disk gone")

    monkeypatch.setattr(bm25_build, "PIPELINE_WORKERS", 2)
    with pytest.raises(OSError, match="disk gone"):
        BM25Index.build(docs(), chunk_size=3)


def test_packed_token_lookup_numbers_terms_as_the_string_lookup():
    """Short ASCII tokens are looked up by their packed integers; ids and term order equal the dict's."""
    tokenizer = Tokenizer(stemmer=None)
    by_key, by_string = bm25_build._Vocabulary(tokenizer), bm25_build._Vocabulary(tokenizer)
    docs = [str(d or "") for d in _corpus(4, 200)] + ["Ünïcode w1 W2 longerword3 w1"]
    for start in range(0, len(docs), 30):
        batch = tokenizer.split(docs[start:start + 30])
        assert batch.packed is not None and 0 < len(batch.packed) < len(batch.dictionary)
        np.testing.assert_array_equal(by_key.ids_of(batch.dictionary, batch.packed), by_string.ids_of(batch.dictionary))
    assert by_key.terms == by_string.terms and len(by_key.packed_keys) > 0


@pytest.mark.parametrize("fielded", [False, True])
def test_terms_larger_than_a_merge_batch_are_merged_in_pieces_into_the_same_files(monkeypatch, tmp_path, fielded):
    """A word in most documents has about as many postings as the corpus has documents: the merge writes such a
    term in pieces of whole blocks (memory bounded by the batch), and the files are those of one whole batch."""
    rng = np.random.default_rng(7)
    common = ["alpha", "beta"]  # in nearly every document: thousands of postings, gaps of 1 and of over 255
    docs = [" ".join([*common[: 1 + (i % 2)], *rng.choice([f"w{j}" for j in range(50)], 5)]) for i in range(3000)]
    docs[1000:1400] = ["w1 w2"] * 400  # a gap of 400 documents in both common words: 2-byte deltas
    pairs = [(d.split()[0], d) for d in docs]

    def build() -> BM25Index:
        if fielded:
            return BM25Index.build_fielded(pairs, ("name", "text"), (2.0, 1.0), (0.5, 0.75), chunk_size=300)
        return BM25Index.build(docs, chunk_size=300)

    whole = _digests(build(), tmp_path / "whole")
    pieces = []
    encode_piece = bm25_build.PostingsWriter.encode_piece
    monkeypatch.setattr(bm25_build.PostingsWriter, "encode_piece",
                        lambda self, *a: pieces.append(len(a[0])) or encode_piece(self, *a))
    monkeypatch.setattr(bm25_budget, "MERGE_POSTINGS_PER_CHUNK_DOC", 1)  # batches of 300 postings: pieces of 256
    for workers in (0, 2):
        monkeypatch.setattr(bm25_build, "PIPELINE_WORKERS", workers)
        assert _digests(build(), tmp_path / f"pieces-{workers}") == whole
    assert pieces and max(pieces) == 256 and min(pieces) < 256


@pytest.mark.parametrize("fielded", [False, True])
def test_the_compiled_loops_write_the_files_of_the_numpy_and_arrow_paths(monkeypatch, tmp_path, fielded):
    """With numba the build splits ASCII chunks, gathers and encodes merge batches in compiled loops: the files
    are those of the Arrow and numpy paths a build without numba takes (plain and fielded, pieces included)."""
    pytest.importorskip("numba")
    monkeypatch.setenv("ARK_BUILD_NUMBA", "1")  # the kernels, whatever this process imported before
    import ark.index.postings as postings_module
    import ark.index.tokenizer as tokenizer_module

    docs = [str(d or "") for d in _corpus(5, 600)]
    docs[:400] = [d.encode("ascii", "ignore").decode() for d in docs[:400]]  # all-ASCII chunks: the compiled split
    monkeypatch.setattr(bm25_budget, "MERGE_POSTINGS_PER_CHUNK_DOC", 2)  # small batches and pieces of big terms

    def build() -> BM25Index:
        if fielded:
            records = [(d[:12], d) for d in docs]
            return BM25Index.build_fielded(records, ("names", "text"), (2.0, 1.0), (0.5, 0.75), chunk_size=100)
        return BM25Index.build(docs, chunk_size=100)

    compiled = _digests(build(), tmp_path / "compiled")
    monkeypatch.setattr(postings_module, "_encode_kernel", lambda: None)
    monkeypatch.setattr(bm25_build, "_encode_kernel", lambda: None)
    monkeypatch.setattr(tokenizer_module, "_split_compiled", lambda arr, lower: None)
    assert _digests(build(), tmp_path / "numpy") == compiled
