"""A saved index's term table answers term -> id lookups exactly as a dict of its terms (the oracle), and indexes
saved before the table existed are read as before and get the table for their next opening."""

from __future__ import annotations

import numpy as np
import pytest

from ark.index import BM25Index
from ark.index.terms import OFFSETS_FILE, ORDER_FILE, TermTable, save_table

TERMS = ["seizur", "febril", "東京", "straße", "z", "a1", "é", "e", "ea", "σίσυφος", "x_y", "12", "ǆemal", "abc" * 40]


def test_lookups_match_a_dict_of_the_terms(tmp_path):
    (tmp_path / "terms.txt").write_text("\n".join(TERMS), encoding="utf-8")
    save_table(tmp_path, TERMS)
    oracle = {term: i for i, term in enumerate(TERMS)}
    for mmap_file in (True, False):
        table = TermTable.load(tmp_path, len(TERMS), mmap_file)
        assert table is not None
        assert len(table) == len(TERMS) and list(table) == TERMS and [table[i] for i in range(len(TERMS))] == TERMS
        assert table[-1] == TERMS[-1]
        for probe in [*TERMS, "seizure", "seizu", "", "zz", "東", "E", "\udcff", "abc" * 39, None]:
            assert table.get(probe) == oracle.get(probe), probe  # type: ignore[arg-type]
            assert table.get(probe) == oracle.get(probe), probe  # type: ignore[arg-type]  # the memoised answer


def test_a_table_that_does_not_fit_the_vocabulary_is_not_used(tmp_path):
    (tmp_path / "terms.txt").write_text("\n".join(TERMS), encoding="utf-8")
    assert TermTable.load(tmp_path, len(TERMS)) is None  # no arrays yet
    save_table(tmp_path, TERMS[:-1])
    assert TermTable.load(tmp_path, len(TERMS)) is None


def test_an_index_saved_without_the_table_loads_the_same_and_gains_it(tmp_path):
    docs = ["generalized tonic clonic seizures", "febrile seizures in infants", "renal cysts", "東京 straße", ""]
    index = BM25Index.build(docs)
    index.save(tmp_path / "index")
    (tmp_path / "index" / OFFSETS_FILE).unlink()
    (tmp_path / "index" / ORDER_FILE).unlink()

    old = BM25Index.load(tmp_path / "index")  # the terms list, as before the table
    assert isinstance(old._term_ids, dict)
    assert (tmp_path / "index" / OFFSETS_FILE).is_file() and (tmp_path / "index" / ORDER_FILE).is_file()
    new = BM25Index.load(tmp_path / "index")
    assert isinstance(new._term_ids, TermTable)
    assert list(new.terms) == list(old.terms) == list(index.terms)
    for query in ("seizures", "febrile infants", "straße 東京", "nothing here", "renal cysts seizures"):
        for k in (1, 3, 10):
            assert new.search(query, k)[0].tolist() == index.search(query, k)[0].tolist()
        assert np.array_equal(new.score(query, np.arange(len(docs))), index.score(query, np.arange(len(docs))))
        assert new.matched_terms(query, 1) == index.matched_terms(query, 1)


def test_an_empty_vocabulary_saves_and_loads(tmp_path):
    index = BM25Index.build(["", "the of and"])
    index.save(tmp_path / "index")
    loaded = BM25Index.load(tmp_path / "index")
    assert loaded.vocabulary_size == 0 and list(loaded.terms) == []
    assert loaded.search("anything", 5)[0].tolist() == []


def test_the_compiled_lookup_finds_and_counts_as_the_dict(tmp_path):
    """A large saved index looks a query's terms up in one compiled call, by binary search or through a hash
    table: ids, counts and first-occurrence order as the dict of its terms gives them, unknown terms (a lone
    surrogate, a prefix, a longer word) skipped."""
    pytest.importorskip("numba")
    from ark.index import _lookup_kernel

    (tmp_path / "terms.txt").write_text("\n".join(TERMS), encoding="utf-8")
    save_table(tmp_path, TERMS)
    table = TermTable.load(tmp_path, len(TERMS))
    assert table is not None
    oracle = {term: i for i, term in enumerate(TERMS)}
    blob, offsets, order = table.arrays()
    hashed = _lookup_kernel.hash_table(blob, offsets, len(order))  # the hashed lookup of a smaller vocabulary
    assert len(hashed) >= 2 * len(TERMS) and sorted(hashed[hashed > 0] - 1) == list(range(len(TERMS)))
    rng = np.random.default_rng(0)
    probes = [*TERMS, "seizure", "seizu", "zz", "東", "E", "\udcff", "abc" * 39, "abc" * 41]
    for _ in range(200):
        query = [probes[int(i)] for i in rng.integers(0, len(probes), rng.integers(0, 8))]
        expected: dict[int, int] = {}
        for term in query:
            if term in oracle:
                expected[oracle[term]] = expected.get(oracle[term], 0) + 1
        keys = np.frombuffer("\n".join(query).encode("utf-8", "surrogatepass"), dtype=np.uint8)
        assert _lookup_kernel.query_rows(*table.arrays(), keys).tolist() == [list(p) for p in expected.items()]
        assert _lookup_kernel.hashed_rows(blob, offsets, hashed, keys).tolist() == [list(p) for p in expected.items()]


def test_a_large_saved_index_finds_the_query_terms_as_the_python_lookup(tmp_path, monkeypatch):
    pytest.importorskip("numba")
    import ark.index.bm25 as bm25_module

    docs = ["generalized tonic clonic seizures", "febrile seizures in infants", "renal cysts", "東京 straße", ""]
    BM25Index.build(docs).save(tmp_path / "index")
    index = BM25Index.load(tmp_path / "index")
    queries = ["seizures seizures febrile", "straße 東京 東京", "nothing here", "", "the of", "renal \udcff cysts"]
    python = [index._query_terms(q) for q in queries]  # below PRUNE_MIN_DOCS: the Python binary search
    assert python[0] == [(index._term_ids.get("seizures"), 2), (index._term_ids.get("febrile"), 1)]
    monkeypatch.setattr(bm25_module, "PRUNE_MIN_DOCS", 0)
    assert [index._query_terms(q) for q in queries] == python
    assert index._vocabulary_arrays is not None  # the compiled path was taken
