"""BM25Index against bm25s (the oracle), subset scoring, persistence and edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from ark.index import ENGLISH_STOPWORDS, BM25Index, Tokenizer

bm25s = pytest.importorskip("bm25s")

CORPUS = [
    "Generalized tonic-clonic seizures with onset in childhood.",
    "Febrile seizures: seizures provoked by fever in infants and young children.",
    "Abnormality of the kidney; renal cysts and renal insufficiency.",
    "The quick brown fox jumps over the lazy dog.",
    "",
    "Über café naïve résumé déjà-vu x_y 12 a1 ²³ 東京 京都",
    "İstanbul ǅemal straße ΣΊΣΥΦΟΣ",
    "seizure seizure seizure seizure",
    "Cardiomyopathy, dilated; heart failure with reduced ejection fraction.",
    "A a I of to",
]
QUERIES = [
    "seizures in children",
    "renal cyst kidney",
    "seizure seizure fever",
    "heart failure",
    "σίσυφος istanbul stanbul 東京",
    "dog fox brown quick",
]


def _bm25s_tokens(texts: list[str], stemmer=None) -> list[list[str]]:
    return bm25s.tokenize(
        texts, stopwords=sorted(ENGLISH_STOPWORDS), stemmer=stemmer, return_ids=False, show_progress=False
    )


def _bm25s_index(stemmer=None, k1=1.5, b=0.75):
    retriever = bm25s.BM25(method="lucene", k1=k1, b=b)
    retriever.index(
        bm25s.tokenize(CORPUS, stopwords=sorted(ENGLISH_STOPWORDS), stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    return retriever


def test_tokenizer_matches_bm25s_including_unicode():
    tok = Tokenizer()
    assert [tok.tokenize(t) for t in CORPUS] == _bm25s_tokens(CORPUS)


@pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (0.9, 0.4), (2.0, 1.0)])
def test_scores_equal_bm25s_lucene(k1, b):
    idx = BM25Index.build(CORPUS, k1=k1, b=b)
    oracle = _bm25s_index(k1=k1, b=b)
    everything = np.arange(len(CORPUS))
    for query in QUERIES:
        expected = oracle.get_scores(_bm25s_tokens([query])[0])
        np.testing.assert_allclose(idx.score(query, everything), expected, atol=1e-5)


def test_stemmed_scores_equal_bm25s():
    stemmer_module = pytest.importorskip("Stemmer")
    stemmer = stemmer_module.Stemmer("english")
    idx = BM25Index.build(CORPUS, tokenizer=Tokenizer(stemmer="english"))
    oracle = _bm25s_index(stemmer=stemmer)
    for query in QUERIES:
        expected = oracle.get_scores(_bm25s_tokens([query], stemmer=stemmer)[0])
        np.testing.assert_allclose(idx.score(query, np.arange(len(CORPUS))), expected, atol=1e-5)
    # "seizure" and "seizures" share a stem, so a singular query now finds the plural-only document.
    assert 1 in idx.search("seizure", 10)[0]


def test_search_is_descending_top_k_of_full_scores():
    words = ["alpha", "beta", "gamma", "delta", "eps"]
    docs = [" ".join(np.random.default_rng(i).choice(words, 6)) for i in range(300)]
    idx = BM25Index.build(docs, chunk_size=37)  # several chunks
    full = idx.score("alpha gamma", np.arange(len(docs)))
    ids, scores = idx.search("alpha gamma", 15)
    order = sorted(np.flatnonzero(full > 0), key=lambda d: (-full[d], d))[:15]
    assert ids.tolist() == order
    np.testing.assert_array_equal(scores, full[ids])


def test_subset_scores_equal_global_scores_restricted():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(50)]
    docs = [" ".join(rng.choice(words, rng.integers(1, 20))) for _ in range(500)]
    idx = BM25Index.build(docs, chunk_size=64)
    for query in ["w1 w2 w3", "w7 w7 w40", "w49"]:
        full = idx.score(query, np.arange(len(docs)))
        subset = rng.choice(len(docs), 40, replace=False)
        np.testing.assert_array_equal(idx.score(query, subset), full[subset])
        ids, scores = idx.search(query, len(docs))
        np.testing.assert_array_equal(full[ids], scores)
        assert set(ids.tolist()) == set(np.flatnonzero(full > 0).tolist())


def test_large_candidate_sets_score_exactly_like_the_subset_path(monkeypatch):
    """score() switches to whole-postings accumulation for large candidate sets; the scores must be identical."""
    import ark.index.bm25 as bm25_module

    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(40)]
    docs = [" ".join(rng.choice(words, rng.integers(1, 30))) for _ in range(800)]
    idx = BM25Index.build(docs, chunk_size=100)
    candidates = np.concatenate([rng.permutation(800)[:300], [5, 5, 799]])  # unsorted, with repeats
    for query in ["w1 w2 w3", "w7 w7 w39", "w0 nothing"]:
        dense = idx.score(query, candidates)  # 303 * 16 >= 800 docs: the dense path
        monkeypatch.setattr(bm25_module, "DENSE_SCORING_FRACTION", 0)
        subset = idx.score(query, candidates)
        monkeypatch.undo()
        assert dense.dtype == subset.dtype == np.float32
        np.testing.assert_array_equal(dense, subset)
        np.testing.assert_array_equal(idx.score(query, candidates.reshape(3, 101)), dense.reshape(3, 101))


@pytest.mark.parametrize("masked", [False, True])
def test_search_over_few_matching_documents_equals_the_full_pass(monkeypatch, masked):
    """search() ranks only the documents holding a query term when they are few; same ids, scores and ties."""
    import ark.index.bm25 as bm25_module

    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(300)]
    docs = [" ".join(rng.choice(words, rng.integers(1, 12))) for _ in range(3000)]
    docs[7] = docs[11] = "w299 w299"  # a tie on a rare word
    idx = BM25Index.build(docs, chunk_size=500)
    mask = rng.random(3000) < 0.5 if masked else None
    for query in ["w299", "w3 w250 w299", "w0 w1 w2 w3 w4 w5 w6 w7"]:
        monkeypatch.setattr(bm25_module, "SPARSE_SEARCH_FRACTION", 10**9)  # never: the full pass
        full = idx.search(query, 15, mask=mask)
        monkeypatch.setattr(bm25_module, "SPARSE_SEARCH_FRACTION", 0)  # always: matching documents only
        sparse = idx.search(query, 15, mask=mask)
        np.testing.assert_array_equal(sparse[0], full[0])
        np.testing.assert_array_equal(sparse[1], full[1])
        assert len(full[0]) > 0


def test_arrow_text_column_builds_the_same_index_as_strings():
    """A graph's text column is indexed as Arrow strings (slices of several chunks, nulls, non-ASCII rows)."""
    import pyarrow as pa

    texts = CORPUS * 7
    column = pa.chunked_array([pa.array(texts[:25]), pa.array(texts[25:] + [None])])
    from_strings = BM25Index.build(texts + [""], chunk_size=9)
    from_arrow = BM25Index.build(column, chunk_size=9)
    assert from_arrow.terms == from_strings.terms
    for name in ("doc_deltas", "tfs", "term_ptr", "term_bytes", "block_last", "block_max_tf", "doc_lengths"):
        np.testing.assert_array_equal(getattr(from_arrow.postings, name), getattr(from_strings.postings, name))


def test_mask_restricts_search():
    idx = BM25Index.build(CORPUS)
    mask = np.zeros(len(CORPUS), dtype=bool)
    mask[[1, 2]] = True
    ids, _ = idx.search("seizures kidney", 10, mask=mask)
    assert sorted(ids.tolist()) == [1, 2]
    with pytest.raises(ValueError, match="mask must be a bool array"):
        idx.search("seizures", 3, mask=np.ones(3, dtype=bool))


def test_ties_broken_by_lower_id():
    idx = BM25Index.build(["apple pie", "banana", "apple pie", "apple pie"])
    ids, scores = idx.search("apple", 2)
    assert ids.tolist() == [0, 2] and scores[0] == scores[1]


@pytest.mark.parametrize("query", ["", "   ", "the of and to", "zzzunknownzzz", "!!! ???"])
def test_queries_without_known_terms_return_empty(query):
    idx = BM25Index.build(CORPUS)
    ids, scores = idx.search(query, 5)
    assert len(ids) == 0 and len(scores) == 0
    np.testing.assert_array_equal(idx.score(query, [0, 1, 2]), np.zeros(3, dtype=np.float32))
    assert idx.matched_terms(query, 0) == []


def test_partial_unknown_terms_k_too_large_and_empty_candidates():
    idx = BM25Index.build(CORPUS)
    ids, _ = idx.search("seizures zzzunknownzzz", 1000)
    assert sorted(ids.tolist()) == [0, 1]
    assert idx.search("seizures", 0)[0].size == 0
    empty = idx.score("seizures", np.array([], dtype=np.int64))
    assert empty.shape == (0,) and empty.dtype == np.float32
    assert idx.score("seizures", []).shape == (0,)


def test_bad_candidates_are_named():
    idx = BM25Index.build(CORPUS)
    with pytest.raises(ValueError, match="candidate 99 is out of range"):
        idx.score("seizures", [1, 99])
    with pytest.raises(ValueError, match="integer node ids"):
        idx.score("seizures", [0.5])


def test_matched_terms_reports_surface_query_tokens():
    idx = BM25Index.build(CORPUS, tokenizer=Tokenizer(stemmer="english"))
    assert idx.matched_terms("Seizure in febrile kids", 1) == ["seizure", "febrile"]
    assert idx.matched_terms("kidney", 1) == []


def test_empty_corpus_and_empty_documents():
    idx = BM25Index.build([])
    assert idx.num_docs == 0 and idx.search("anything", 3)[0].size == 0
    idx = BM25Index.build(["", "the of", ""])
    assert idx.num_docs == 3 and idx.search("the", 3)[0].size == 0


def test_save_load_roundtrip_is_memory_mapped(tmp_path):
    idx = BM25Index.build(CORPUS, k1=1.2, b=0.5, tokenizer=Tokenizer(stopwords=["quick"], stemmer="english"))
    idx.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    assert isinstance(loaded.postings.tfs.base, np.memmap) and isinstance(loaded.postings.doc_deltas.base, np.memmap)
    assert (loaded.k1, loaded.b, loaded.tokenizer.config()) == (1.2, 0.5, idx.tokenizer.config())
    for query in QUERIES + ["the quick fox"]:
        np.testing.assert_array_equal(loaded.search(query, 5)[0], idx.search(query, 5)[0])
        np.testing.assert_array_equal(loaded.score(query, [0, 3, 7]), idx.score(query, [0, 3, 7]))
    idx2 = BM25Index.build(["other corpus"])
    idx2.save(tmp_path / "bm25")  # replaces atomically
    assert BM25Index.load(tmp_path / "bm25").num_docs == 1
    assert [p.name for p in tmp_path.iterdir()] == ["bm25"]


def test_invalid_settings_are_named():
    with pytest.raises(ValueError, match="b must be in"):
        BM25Index.build(CORPUS, b=1.5)
    with pytest.raises(ValueError, match="unknown stopwords 'klingon'"):
        Tokenizer(stopwords="klingon")
    with pytest.raises(ValueError, match="unknown stemmer language 'klingon'"):
        Tokenizer(stemmer="klingon")
    with pytest.raises(FileNotFoundError, match="no BM25 index"):
        BM25Index.load("/nonexistent/dir")


def test_duplicate_and_unsorted_candidates_score_like_single_ones():
    idx = BM25Index.build(CORPUS)
    full = idx.score("seizures fever kidney", np.arange(len(CORPUS)))
    cands = np.array([2, 1, 2, 0, 1, 9])
    np.testing.assert_array_equal(idx.score("seizures fever kidney", cands), full[cands])


def test_dense_top_k_shortcut_is_exact_with_ties():
    from ark.index.topk import top_k, top_k_dense

    rng = np.random.default_rng(3)
    scores = rng.integers(0, 40, 200_000).astype(np.float32) / 4  # many ties and zeros
    for k in (1, 20, 500):
        ids, vals = top_k_dense(scores, k)
        positive = np.flatnonzero(scores > 0)
        ref_ids, ref_vals = top_k(positive, scores[positive], k)
        np.testing.assert_array_equal(ids, ref_ids)
        np.testing.assert_array_equal(vals, ref_vals)
    assert top_k_dense(np.zeros(100_000, np.float32), 5)[0].size == 0


def _reference_split_tokens(tokenizer: Tokenizer, text: str) -> list[str]:
    """Per-text split through Python's re (the query path): lowercased \\w runs of length >= 2."""
    from ark.index.tokenizer import _WORD_RE

    return _WORD_RE.findall(text.lower() if tokenizer.lower else text)


@pytest.mark.parametrize("lower", [True, False])
def test_batch_split_agrees_with_single_text_path(lower):
    """The vectorised batch split (ASCII byte table, packed short tokens, regex for non-ASCII texts) yields,
    per text, the same tokens as the Python-re path used for queries (surface_tokens)."""
    rng = np.random.default_rng(5)
    alphabet = list("abcXYZ019_") + [" ", " ", "-", ".", "'", "\t", "\n", "/"]
    texts = ["".join(rng.choice(alphabet, rng.integers(0, 60))) for _ in range(300)]
    # Token lengths straddling the 8-byte packing limit, mixed case, and non-ASCII texts among ASCII ones.
    texts += ["abcdefgh abcdefghi ABCDEFGH abcdefgh_ 12345678 123456789", "x" * 40, "", "  ", "a"]
    texts += CORPUS + ["naïve abcdefgh café", "ΣΊΣΥΦΟΣ abcdefgh", "İstanbul x_y"]
    tok = Tokenizer(stopwords="none", lower=lower)
    batch = tok.split(texts)
    assert batch.num_texts == len(texts)
    per_text: list[list[str]] = [[] for _ in texts]
    for doc, code in zip(batch.doc_ids.tolist(), batch.codes.tolist(), strict=True):
        raw = batch.dictionary[code]
        if len(raw) >= 2:
            per_text[doc].append(raw)
    for i, text in enumerate(texts):
        expected = _reference_split_tokens(tok, text)
        assert sorted(per_text[i]) == sorted(expected), text
        assert sorted(per_text[i]) == sorted(tok.surface_tokens(text)), text


def test_build_from_non_string_documents_and_chunks_agree():
    docs = ["alpha beta", None, 7, "beta gamma gamma", "Ünïcode beta"] * 7
    whole = BM25Index.build(docs)
    chunked = BM25Index.build(docs, chunk_size=3)
    assert whole.num_docs == len(docs) and whole.doc_lengths[1] == 0
    everything = np.arange(len(docs))
    for query in ["beta", "gamma alpha", "7 ünïcode"]:
        np.testing.assert_allclose(chunked.score(query, everything), whole.score(query, everything), atol=1e-6)
    assert whole.score("ünïcode", [4])[0] > 0


def test_merging_the_spilled_runs_in_small_batches_gives_the_same_postings(monkeypatch):
    """The build spills each chunk as a sorted run and merges term batches; batch and chunk sizes change nothing."""
    import ark.index.bm25_budget as bm25_budget

    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(500)]
    docs = [" ".join(rng.choice(words, rng.integers(0, 40))) for _ in range(3000)]
    whole = BM25Index.build(docs, chunk_size=10_000)
    monkeypatch.setattr(bm25_budget, "MERGE_POSTINGS_PER_CHUNK_DOC", 1)  # batches of ~50 postings
    pieces = BM25Index.build(docs, chunk_size=50)
    for name in ("doc_deltas", "tfs", "term_ptr", "term_bytes", "term_first", "term_widths", "block_last",
                 "block_max_tf", "block_min_dl", "doc_lengths"):
        np.testing.assert_array_equal(getattr(pieces.postings, name), getattr(whole.postings, name))
    for term in (0, 7, 499):
        docs_of_term = whole.postings.docs(term)
        assert np.all(np.diff(docs_of_term) > 0)
        assert [d for d, doc in enumerate(docs) if whole.terms[term] in doc.split()] == docs_of_term.tolist()


@pytest.mark.parametrize("lower", [True, False])
def test_compiled_split_of_ascii_texts_equals_arrows(monkeypatch, lower):
    """All-ASCII batches are split by a compiled loop when numba is installed: the same tokens of each text, the
    same distinct tokens in the same order and packed integers as Arrow's split (plain strings and an Arrow column
    with a sliced offset). Arrow's whitespace split also yields empty tokens (an empty text, trailing spaces),
    which every index drops; the compiled loop yields none."""
    pytest.importorskip("numba")
    import pyarrow as pa

    import ark.index.tokenizer as tokenizer_module

    rng = np.random.default_rng(9)
    alphabet = list("abcXYZ019_") + [" ", " ", "-", ".", "'", "\t", "\n", "/"]
    texts = ["".join(rng.choice(alphabet, rng.integers(0, 80))) for _ in range(400)]
    texts += ["abcdefgh abcdefghi ABCDEFGH abcdefgh_ 12345678 123456789", "x" * 40, "", "  ", "a", "Z" * 9]
    tok = Tokenizer(stopwords="none", lower=lower)
    column = pa.array(["padding"] + texts).slice(1)
    compiled = [tok.split(texts), tok.split(column)]
    monkeypatch.setattr(tokenizer_module, "_split_compiled", lambda arr, lower: None)
    for batch, arrow in zip(compiled, [tok.split(texts), tok.split(column)], strict=True):
        assert batch.num_texts == arrow.num_texts == len(texts)
        tokens = [(d, batch.dictionary[c]) for d, c in zip(batch.doc_ids.tolist(), batch.codes.tolist(), strict=True)]
        expected = [(d, arrow.dictionary[c]) for d, c in zip(arrow.doc_ids.tolist(), arrow.codes.tolist(), strict=True)]
        assert tokens == [(d, t) for d, t in expected if t] and len(tokens) > 1000
        assert list(batch.dictionary) == [t for t in arrow.dictionary if t]
        np.testing.assert_array_equal(batch.packed, arrow.packed[arrow.packed != 0])
