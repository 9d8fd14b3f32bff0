"""A saved index's term table answers term -> id lookups exactly as a dict of its terms (the oracle), and indexes
saved before the table existed are read as before and get the table for their next opening."""

from __future__ import annotations

import numpy as np

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
