"""Oracle tests of global top-k search: on random corpora and queries, search() returns exactly the exhaustive
ranking (every document's score, then highest first, ties by lower id), and the scores equal bm25s's (plain) or the
BM25F formula's (fielded) — with type masks, the exact-name boost, ties, stopword-only and unknown-term queries."""

from __future__ import annotations

import numpy as np
import pytest

from ark.index import ENGLISH_STOPWORDS, BM25Index
from ark.index.exact import ExactNames
from tests.index.test_bm25f import reference_bm25f

bm25s = pytest.importorskip("bm25s")


@pytest.fixture(params=["exhaustive", "pruned", "pruned-seeded", "accumulated"])
def search_path(request, monkeypatch):
    """Run a test with the exhaustive numpy pass, then with the compiled paths (numba) on the same small corpora:
    dynamic pruning, the walk alone and seeded by the documents of the query's rarest terms (up to 150 postings:
    some queries are answered by the seeds alone, most walk their frequent terms after them), and the long-query
    path (every posting added term at a time, here for every query)."""
    import ark.index.bm25 as bm25_module
    from ark.index import bm25_prune

    if request.param == "exhaustive":
        monkeypatch.setattr(bm25_module, "PRUNE_MIN_DOCS", 10**12)
        yield request.param
        return
    if not bm25_prune.available():
        pytest.skip("numba is not installed")
    calls = []
    name = "accumulated_top_k" if request.param == "accumulated" else "pruned_top_k"
    real = getattr(bm25_prune, name)
    monkeypatch.setattr(bm25_prune, name, lambda *a, **kw: calls.append(1) or real(*a, **kw))
    monkeypatch.setattr(bm25_module, "PRUNE_MIN_DOCS", 0)
    monkeypatch.setattr(bm25_module, "SEED_POSTINGS", 150 if request.param == "pruned-seeded" else 0)
    monkeypatch.setattr(bm25_module, "ACCUMULATE_MAX_DOCS", 0)  # the pruned paths on every query, frequent terms too
    if request.param == "accumulated":
        monkeypatch.setattr(bm25_module, "LONG_QUERY_TERMS", 1)
    yield request.param
    assert calls, f"the {request.param} path was never taken"


def _corpus(seed: int, n_docs: int, vocab: int) -> tuple[list[str], list[str]]:
    """Zipf-distributed documents (with repeated documents, so scores tie) and the vocabulary."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}x" for i in range(vocab)]
    p = 1.0 / np.arange(1, vocab + 1)
    p /= p.sum()
    docs = [" ".join(rng.choice(words, rng.integers(0, 30), p=p)) for _ in range(n_docs)]
    for i in rng.choice(n_docs, n_docs // 20, replace=False):  # duplicates: equal scores, told apart by id
        docs[i] = docs[(i * 7) % n_docs]
    return docs, words


def _queries(seed: int, words: list[str], count: int) -> list[str]:
    rng = np.random.default_rng(seed)
    queries = [" ".join(rng.choice(words, rng.integers(1, 6))) for _ in range(count)]
    # Repeated terms, stopwords, unknown words, a stopword-only and an unknown-only query.
    return queries + [f"{words[0]} {words[0]} {words[3]}", f"the {words[1]} of zzznotaword", "the of and",
                      "zzznotaword", f"{words[-1]} {words[0]}"]


def _exhaustive(full: np.ndarray, k: int, mask: np.ndarray | None) -> np.ndarray:
    """Reference ranking: documents scoring > 0 (and in the mask), by score descending then id ascending."""
    ok = full > 0
    if mask is not None:
        ok &= mask
    ids = np.flatnonzero(ok)
    return ids[np.lexsort((ids, -full[ids]))][:k]


def _assert_search_is_exhaustive(index: BM25Index, queries: list[str], masks: list, ks=(1, 10, 50)) -> int:
    """Every (query, mask, k): ids, order and scores of search() equal the exhaustive ranking; returns hits seen."""
    everything = np.arange(index.num_docs)
    seen = 0
    for query in queries:
        full = index.score(query, everything)
        for mask in masks:
            for k in ks:
                ids, scores = index.search(query, k, mask=mask)
                expected = _exhaustive(full, k, mask)
                assert ids.tolist() == expected.tolist(), (query, k, mask is not None)
                np.testing.assert_array_equal(scores, full[expected])
                seen += len(ids)
        # Subset scoring (a node's neighbours): unsorted candidates with repeats score as the exhaustive pass.
        rng = np.random.default_rng(len(query))
        for size in (1, 40, index.num_docs // 20):
            candidates = rng.integers(0, index.num_docs, size)
            np.testing.assert_array_equal(index.score(query, candidates), full[candidates])
    return seen


def _bm25s_scores(docs: list[str], queries: list[str], k1: float, b: float) -> list[np.ndarray]:
    stop = sorted(ENGLISH_STOPWORDS)
    retriever = bm25s.BM25(method="lucene", k1=k1, b=b)
    retriever.index(bm25s.tokenize(docs, stopwords=stop, show_progress=False), show_progress=False)
    tokens = bm25s.tokenize(queries, stopwords=stop, return_ids=False, show_progress=False)
    return [retriever.get_scores(t) if t else np.zeros(len(docs)) for t in tokens]


@pytest.mark.parametrize(("seed", "n_docs", "vocab", "k1", "b"),
                         [(0, 3000, 60, 1.5, 0.75), (1, 5000, 400, 1.2, 0.4), (2, 800, 25, 2.0, 1.0)])
def test_plain_search_equals_exhaustive_ranking_and_bm25s(seed, n_docs, vocab, k1, b, search_path):
    docs, words = _corpus(seed, n_docs, vocab)
    queries = _queries(seed + 10, words, 25)
    index = BM25Index.build(docs, k1=k1, b=b, chunk_size=700)
    everything = np.arange(n_docs)
    for query, expected in zip(queries, _bm25s_scores(docs, queries, k1, b), strict=True):
        np.testing.assert_allclose(index.score(query, everything), expected, rtol=1e-6, atol=1e-6)
    rng = np.random.default_rng(seed)
    masks = [None, rng.random(n_docs) < 0.3, np.zeros(n_docs, dtype=bool)]
    assert _assert_search_is_exhaustive(index, queries, masks) > 0
    for query in ("the of and", "zzznotaword", ""):
        assert index.search(query, 10)[0].size == 0


def _fielded_corpus(seed: int, n_docs: int):
    docs, words = _corpus(seed, n_docs, 80)
    rng = np.random.default_rng(seed)
    names = [[" ".join(rng.choice(words[:40], rng.integers(1, 3)))] for _ in range(n_docs)]
    for i in rng.choice(n_docs, 30, replace=False):  # several nodes share a name: boosted ties
        names[i] = names[0]
    return [("\n".join(n), text) for n, text in zip(names, docs, strict=True)], names, words


@pytest.mark.parametrize("with_exact", [False, True])
def test_fielded_search_equals_exhaustive_ranking_and_the_bm25f_formula(with_exact, search_path):
    records, names, words = _fielded_corpus(3, 2500)
    weights, bs, k1 = (3.0, 1.0), (0.5, 0.75), 1.5
    index = BM25Index.build_fielded(records, ("names", "text"), weights, bs, k1=k1,
                                    exact=ExactNames.build(names) if with_exact else None, chunk_size=600)
    queries = _queries(4, words, 15) + [names[0][0], names[5][0], names[0][0].upper() + "!"]
    everything = np.arange(len(records))
    for query in queries[:8]:
        expected = reference_bm25f(records, query, weights, bs, k1)
        named = index.exact.lookup(query) if with_exact else []
        got = index.score(query, everything)
        unboosted = np.delete(np.arange(len(records)), named)
        np.testing.assert_allclose(got[unboosted], expected[unboosted], rtol=1e-6, atol=1e-6)
    rng = np.random.default_rng(5)
    masks = [None, rng.random(len(records)) < 0.4]
    _assert_search_is_exhaustive(index, queries, masks)
    if with_exact:  # the nodes so named come first, tied among themselves and in id order
        ids, scores = index.search(names[0][0], 40)
        named = index.exact.lookup(names[0][0])
        assert len(named) >= 2 and sorted(ids[: len(named)].tolist()) == named.tolist()
        assert scores[len(named) - 1] > scores[len(named)]


def test_saved_index_searches_like_the_built_one(tmp_path, search_path):
    docs, words = _corpus(6, 2000, 120)
    index = BM25Index.build(docs, chunk_size=300)
    index.save(tmp_path / "idx")
    loaded = BM25Index.load(tmp_path / "idx")
    for query in _queries(7, words, 20):
        for k in (5, 30):
            built, opened = index.search(query, k), loaded.search(query, k)
            np.testing.assert_array_equal(built[0], opened[0])
            np.testing.assert_array_equal(built[1], opened[1])
    _assert_search_is_exhaustive(loaded, _queries(8, words, 10), [None])


def test_long_queries_rank_as_the_exhaustive_pass(search_path):
    """Queries of 40-120 words (a whole passage as the query, repeated words): the long-query path by default."""
    docs, words = _corpus(9, 3000, 300)
    index = BM25Index.build(docs, chunk_size=800)
    rng = np.random.default_rng(3)
    queries = [" ".join(rng.choice(words, int(n))) for n in rng.integers(40, 120, 6)]
    queries += [docs[int(i)] + " " + docs[int(i) + 1] for i in rng.integers(0, 2900, 4)]
    rng_mask = np.random.default_rng(4)
    assert _assert_search_is_exhaustive(index, queries, [None, rng_mask.random(3000) < 0.2]) > 0


def test_an_index_saved_without_the_fine_skip_list_scores_the_same(tmp_path, search_path):
    """An index written before the fine skip list (no skip_last.bin) opens and reads the block skip list."""
    docs, words = _corpus(5, 2500, 150)
    index = BM25Index.build(docs, chunk_size=600)
    index.save(tmp_path / "idx")
    (tmp_path / "idx" / "skip_last.bin").unlink()
    older = BM25Index.load(tmp_path / "idx")
    assert older.postings.skip_last is None
    rng = np.random.default_rng(1)
    for query in _queries(2, words, 15):
        candidates = rng.integers(0, 2500, 100)
        np.testing.assert_array_equal(older.score(query, candidates), index.score(query, candidates))
        np.testing.assert_array_equal(older.search(query, 20)[0], index.search(query, 20)[0])
    _assert_search_is_exhaustive(older, _queries(3, words, 8), [None])


def _rare_and_frequent_corpus(seed: int, n_docs: int) -> list[str]:
    """A frequent word in most documents, a rare one in 125 (five times in 13 of them, so the rare word's strong
    documents fill a top 5 that its weak ones plus the frequent word can no longer reach), repeated documents
    (ties), and background words."""
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n_docs):
        words = list(rng.choice([f"b{j}x" for j in range(50)], rng.integers(3, 20)))
        if rng.random() < 0.8:
            words += ["often"] * int(rng.integers(1, 4))
        if i % 40 == 0:
            words += ["seldom"] * (5 if i % 400 == 0 else 1)
        docs.append(" ".join(words))
    for i in range(0, n_docs - 200, 400):  # duplicates of rare-word documents: equal scores, told apart by id
        docs[i + 200] = docs[i]
    return docs


def test_seeds_that_cannot_reach_the_top_are_passed_over_exactly(search_path):
    """The rare word's documents (125, under the seeding budget of the ``pruned-seeded`` path) seed the result;
    the frequent word is looked up only in the seeds whose rare weight plus its bound can still reach the k-th
    best, then walked: ranks and scores as the exhaustive pass, with masks, ties, the exact-name boost and field
    weights."""
    docs = _rare_and_frequent_corpus(11, 5000)
    queries = ["seldom often", "often seldom b3x", "seldom", "often b7x seldom seldom"]
    rng = np.random.default_rng(12)
    masks = [None, rng.random(len(docs)) < 0.5]
    assert _assert_search_is_exhaustive(BM25Index.build(docs, chunk_size=900), queries, masks, ks=(1, 5, 20)) > 0
    names = [[" ".join(d.split()[:2])] for d in docs]
    names[7] = names[3000] = ["seldom often"]  # exactly named by the first query: boosted above every seed
    records = [("\n".join(n), d) for n, d in zip(names, docs, strict=True)]
    fielded = BM25Index.build_fielded(records, ("names", "text"), (3.0, 1.0), (0.5, 0.75),
                                      exact=ExactNames.build(names), chunk_size=900)
    assert _assert_search_is_exhaustive(fielded, queries, masks, ks=(1, 5, 20)) > 0
    assert sorted(fielded.search("seldom often", 2)[0].tolist()) == [7, 3000]


@pytest.mark.parametrize(("longest", "dtype"), [(200, np.uint8), (400, np.uint16), (66_000, np.int32)])
def test_document_lengths_in_a_narrower_type_score_the_same(longest, dtype, search_path):
    """The compiled paths read the document lengths in the narrowest type that holds them (a byte below 256
    tokens, two below 65,536): rankings and scores as the exhaustive pass's, subset scores as the numpy path's."""
    from ark.index import bm25_prune

    docs, words = _corpus(13, 1500, 90)
    rng = np.random.default_rng(14)
    for i in rng.choice(len(docs), 8, replace=False):  # long documents: lengths up to ``longest`` tokens
        docs[i] = " ".join(rng.choice(words, int(rng.integers(longest - 100, longest + 1))))
    index = BM25Index.build(docs, chunk_size=400)
    assert bm25_prune.narrow_lengths(index.doc_lengths).dtype == dtype
    assert _assert_search_is_exhaustive(index, _queries(15, words, 12), [None, rng.random(len(docs)) < 0.3]) > 0
    for query in _queries(16, words, 6):
        candidates = rng.integers(0, len(docs), 300)
        np.testing.assert_array_equal(index.score(query, candidates), index._score_dense(query, candidates))


def test_a_larger_index_seeds_with_a_share_of_its_documents(monkeypatch):
    """The seed budget grows with the index (``SEED_FRACTION`` of its documents, at least ``SEED_POSTINGS``):
    still the exhaustive ranking, with the budget the kernel is given."""
    import ark.index.bm25 as bm25_module
    from ark.index import bm25_prune

    if not bm25_prune.available():
        pytest.skip("numba is not installed")
    budgets = []
    real = bm25_prune.pruned_top_k
    monkeypatch.setattr(bm25_prune, "pruned_top_k", lambda *a: budgets.append(a[-1]) or real(*a))
    monkeypatch.setattr(bm25_module, "PRUNE_MIN_DOCS", 0)
    monkeypatch.setattr(bm25_module, "SEED_POSTINGS", 40)
    monkeypatch.setattr(bm25_module, "SEED_FRACTION", 20)
    docs = _rare_and_frequent_corpus(17, 5000)
    rng = np.random.default_rng(18)
    queries = ["seldom often", "often seldom b3x", "b5x often", "often b7x seldom seldom b9x"]
    assert _assert_search_is_exhaustive(BM25Index.build(docs, chunk_size=900), queries,
                                        [None, rng.random(len(docs)) < 0.5], ks=(1, 5, 20)) > 0
    assert set(budgets) == {250}


def test_a_query_of_only_frequent_words_on_a_small_index_adds_every_posting_exactly(monkeypatch):
    """On a small index a query none of whose words could seed the pruned search (each in more documents than the
    seed budget) is added term at a time (its walk would visit most documents anyway), with the exhaustive
    ranking; a query with a rarer word is still pruned."""
    import ark.index.bm25 as bm25_module
    from ark.index import bm25_prune

    if not bm25_prune.available():
        pytest.skip("numba is not installed")
    taken = []
    for name in ("accumulated_top_k", "pruned_top_k"):
        real = getattr(bm25_prune, name)
        monkeypatch.setattr(bm25_prune, name, lambda *a, _n=name, _f=real: taken.append(_n) or _f(*a))
    monkeypatch.setattr(bm25_module, "PRUNE_MIN_DOCS", 0)
    monkeypatch.setattr(bm25_module, "SEED_POSTINGS", 200)
    index = BM25Index.build(_rare_and_frequent_corpus(19, 4000), chunk_size=900)
    rng = np.random.default_rng(20)
    masks = [None, rng.random(index.num_docs) < 0.5]
    assert _assert_search_is_exhaustive(index, ["often b3x b4x", "b1x often often b2x"], masks) > 0
    assert set(taken) == {"accumulated_top_k"}
    taken.clear()
    assert _assert_search_is_exhaustive(index, ["often seldom b3x"], masks) > 0
    assert set(taken) == {"pruned_top_k"}
    monkeypatch.setattr(bm25_module, "ACCUMULATE_MAX_DOCS", index.num_docs - 1)  # a larger index: pruned
    taken.clear()
    index.search("often b3x b4x", 5)
    assert taken == ["pruned_top_k"]


def test_a_late_strong_document_of_the_last_essential_term_still_enters(search_path):
    """Once the heap is full and only one term is still essential, the walk runs that term's documents alone: the
    strongest documents come last (the middling word five times in a short document, beside the frequent one), so
    they must enter a heap filled long before, through the other terms' lookups — with ties, masks and k up to 20."""
    rng = np.random.default_rng(21)
    docs = []
    for i in range(6000):
        words = list(rng.choice([f"b{j}x" for j in range(40)], rng.integers(8, 20)))
        words += ["often"] * int(rng.integers(1, 4))
        if i % 6 == 0:
            words += ["middling"] * (5 if i > 5600 and i % 12 == 0 else 1)
            if i > 5600:
                words = words[-8:]
        docs.append(" ".join(words))
    for i in range(5700, 5990, 60):  # ties among the strong late documents
        docs[i + 12] = docs[i]
    queries = ["often middling", "middling often b3x", "middling b5x b7x often"]
    masks = [None, rng.random(len(docs)) < 0.6]
    index = BM25Index.build(docs, chunk_size=1100)
    assert _assert_search_is_exhaustive(index, queries, masks, ks=(1, 5, 20)) > 0
    assert index.search("often middling", 5)[0].min() > 5600



@pytest.mark.parametrize("fielded", [False, True])
def test_rare_words_score_a_subset_from_their_postings_as_the_numpy_path(monkeypatch, fielded):
    """When the query's terms hold few postings for the number of candidates, subset scoring streams them through a
    table of the candidates (no sort of the candidates): unsorted candidates with repeats,
    sorted distinct ones (a node's neighbours), a repeated query word, a word in no document, equal the numpy
    path's float32 scores bit for bit; with more postings than candidates the other path is taken."""
    import ark.index.bm25 as bm25_module
    from ark.index import bm25_prune

    if not bm25_prune.available():
        pytest.skip("numba is not installed")
    from ark.index import _sparse_kernel

    docs, words = _corpus(21, 4000, 3000)  # a long tail: most words in a few documents
    index = (BM25Index.build_fielded([[doc[: len(doc) // 3], doc] for doc in docs], ("names", "text"), (3.0, 1.0),
                                     (0.5, 0.75), chunk_size=900) if fielded else BM25Index.build(docs, chunk_size=900))

    def postings(word: str) -> int:
        return sum(len(index.postings.docs(tid)) for tid, _ in index._query_terms(word))

    rare = [w for w in words[300:] if 0 < postings(w) < 12]
    frequent = max(words[:5], key=postings)
    queries = [f"{rare[0]} {rare[1]}", f"{rare[2]} {rare[2]} {rare[3]} the", f"{rare[4]} zzznotaword",
               f"{frequent} {rare[5]}"]
    rng = np.random.default_rng(22)
    candidates = [np.concatenate([index.postings.docs(index._query_terms(q)[0][0])[:3], rng.integers(0, 4000, 200)])
                  for q in queries]  # some documents of the first word, so some scores are not 0 (and fewer than
    # 1/16 of the documents, which are scored densely)
    expected = [index.score(q, c) for q, c in zip(queries, candidates, strict=True)]  # the numpy path
    distinct = [np.unique(c) for c in candidates]
    expected_distinct = [index._subset_scores(index._query_terms(q), d) for q, d in zip(queries, distinct, strict=True)]
    taken: list[int] = []
    real = _sparse_kernel.posting_scores
    monkeypatch.setattr(_sparse_kernel, "posting_scores", lambda *a: taken.append(1) or real(*a))
    monkeypatch.setattr(bm25_module, "PRUNE_MIN_DOCS", 0)
    for query, cands, want, unique, want_unique in zip(queries, candidates, expected, distinct, expected_distinct,
                                                       strict=True):
        taken.clear()
        np.testing.assert_array_equal(index.score(query, cands), want)
        np.testing.assert_array_equal(index._subset_scores(index._query_terms(query), unique), want_unique)
        assert len(taken) == (0 if query.startswith(frequent) else 2), query
    assert postings(frequent) > 2 * 203 and all(e[:3].all() for e in expected)
