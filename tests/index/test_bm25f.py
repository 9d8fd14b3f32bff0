"""Field-aware BM25 (BM25F) against a direct transcription of its formula, exact names, and the fielded graph index."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from ark.graph import EdgeTable, NodeTable, build_graph, load_graph, save_graph
from ark.index import BM25Index, Tokenizer, open_index
from ark.index import exact as exact_module
from ark.index.exact import ExactNames, ExactNamesBuilder, _hash, exact_key
from ark.index.graph_index import node_names, resolve_name_keys

DOCS = [
    ("FBN1", "FBN1 gene. Associated diseases: Marfan syndrome; Acromicric dysplasia; Stiff skin syndrome"),
    ("Marfan syndrome\nMFS", "Marfan syndrome. Associated genes: FBN1. A connective tissue disorder"),
    ("Stiff skin syndrome", "Stiff skin syndrome. Associated genes: FBN1"),
    ("Seizure\nSeizures\nEpileptic seizure", "Seizure. An intermittent abnormality of nervous system physiology"),
    ("Focal aware motor seizure", "Focal aware motor seizure. A focal seizure with motor signs"),
    ("", ""),
]
QUERIES = ["FBN1", "marfan syndrome", "seizure seizure motor", "stiff skin FBN1 gene", "epileptic", "nothing here"]


def reference_bm25f(docs, query, weights, bs, k1):
    """BM25F written out term by term: tf~ = sum_f w_f tf_f / (1 - b_f + b_f len_f / avglen_f); idf over documents."""
    tok = Tokenizer()
    fields = [[tok.tokenize(doc[f]) for doc in docs] for f in range(len(weights))]
    avg = [max(sum(map(len, column)) / len(docs), 1e-12) for column in fields]
    n = len(docs)
    scores = np.zeros(n)
    for term, count in Counter(tok.tokenize(query)).items():
        df = sum(any(term in column[i] for column in fields) for i in range(n))
        if df == 0:
            continue
        idf = math.log1p((n - df + 0.5) / (df + 0.5))
        for i in range(n):
            pseudo = sum(weights[f] * fields[f][i].count(term) / (1 - bs[f] + bs[f] * len(fields[f][i]) / avg[f])
                         for f in range(len(weights)) if term in fields[f][i])
            scores[i] += count * idf * pseudo / (pseudo + k1)
    return scores


@pytest.mark.parametrize(("weights", "bs", "k1"), [((3.0, 1.0), (0.5, 0.75), 1.5), ((1.0, 2.0), (1.0, 0.0), 0.9)])
def test_fielded_scores_equal_the_bm25f_formula(weights, bs, k1):
    index = BM25Index.build_fielded(DOCS, ("names", "text"), weights, bs, k1=k1, chunk_size=2)  # several chunks
    everything = np.arange(len(DOCS))
    for query in QUERIES:
        np.testing.assert_allclose(index.score(query, everything), reference_bm25f(DOCS, query, weights, bs, k1),
                                   rtol=1e-5, atol=1e-6)


def test_one_field_of_weight_one_is_plain_bm25():
    texts = [text for _, text in DOCS]
    plain = BM25Index.build(texts, k1=1.2, b=0.6)
    fielded = BM25Index.build_fielded([(t,) for t in texts], ("text",), (1.0,), (0.6,), k1=1.2)
    for query in QUERIES:
        np.testing.assert_allclose(fielded.score(query, np.arange(len(texts))), plain.score(query, np.arange(6)),
                                   rtol=1e-5, atol=1e-6)


def test_bad_field_settings_are_refused():
    with pytest.raises(ValueError, match="one weight and one b per field"):
        BM25Index.build_fielded(DOCS, ("names", "text"), (1.0,), (0.5, 0.5))
    with pytest.raises(ValueError, match="needs 2 fields"):
        BM25Index.build_fielded([("only one",)], ("names", "text"), (1.0, 1.0), (0.5, 0.5))


def test_exact_keys_ignore_case_and_punctuation():
    assert exact_key("OMIM:154700") == "omim 154700"
    assert exact_key("  Ehlers-Danlos syndrome, type IV ") == "ehlers danlos syndrome type iv"
    table = ExactNames.build([["FBN1", "NCBIGene:2200"], ["Marfan syndrome"], [], ["marfan  SYNDROME"]])
    assert table.lookup("fbn1").tolist() == [0] and table.lookup("ncbigene 2200").tolist() == [0]
    assert table.lookup("Marfan-syndrome").tolist() == [1, 3] and table.lookup("Marfan").tolist() == []
    assert table.lookup("").tolist() == [] and len(ExactNames.build([]).lookup("x")) == 0


def test_an_exactly_named_node_outranks_every_word_match(tmp_path):
    names = [["Seizure", "HP:1"], ["Seizure disorder", "HP:2"], ["Seizure seizure", "HP:3"]]
    docs = [("\n".join(n), text) for n, text in
            zip(names, ["Seizure.", "Seizure seizure seizure seizure.", "Seizure seizure seizure."], strict=True)]
    index = BM25Index.build_fielded(docs, ("names", "text"), (0.0, 1.0), (0.5, 0.75))
    without = index.search("seizure", 3)[0].tolist()
    index.exact = ExactNames.build(names)
    ids, scores = index.search("seizure", 3)
    assert ids[0] == 0 and without[0] != 0 and scores[0] > scores[1]
    assert index.search("hp:2", 1)[0].tolist() == [1]  # identifiers match whole, not as the shared "hp"
    subset = index.score("Seizure", [2, 0])
    assert subset[1] > subset[0]  # neighbourhood ranking sees the same boost
    index.save(tmp_path / "idx")
    loaded = BM25Index.load(tmp_path / "idx")
    assert loaded.fields == index.fields and loaded.search("seizure", 3)[0].tolist() == ids.tolist()


def _graph():
    nodes = NodeTable(
        ids=["NCBIGene:2200", "OMIM:154700", "ORPHA:558", "OMIM:610168", "HP:0001250", "HP:0007359"],
        types=["gene", "disease", "disease", "disease", "phenotype", "phenotype"],
        names=["FBN1", "Marfan syndrome", "Marfan syndrome", "Stiff skin syndrome", "Seizure", "Focal seizure"],
        texts=["FBN1 gene. Associated diseases: Marfan syndrome; Stiff skin syndrome; Neonatal Marfan syndrome",
               "Marfan syndrome. Disease from OMIM. Associated genes: FBN1",
               "Marfan syndrome. Disease from Orphanet. Associated genes: FBN1",
               "Stiff skin syndrome. Associated genes: FBN1",
               "Seizure. Synonyms: Epileptic seizure; Seizures",
               "Focal seizure. Synonyms: Partial seizure"],
        properties=[None, None, None, None, {"exact_synonyms": ["Epileptic seizure", "Seizures"]},
                    {"exact_synonyms": ["Partial seizure"]}],
    )
    edges = EdgeTable(["OMIM:154700", "HP:0007359"], ["NCBIGene:2200", "HP:0001250"], ["associated_gene", "is_a"])
    name_fields = {"*": ["name", "id"], "phenotype": ["name", "exact_synonyms", "id"]}
    return build_graph(nodes, edges, metadata={"name": "names", "name_fields": name_fields})


def test_fielded_graph_index_finds_what_is_named():
    graph = _graph()
    index = open_index(graph, progress=False)
    plain = open_index(graph, scoring="plain", progress=False)
    assert plain.search("FBN1", 1)[0][0] != 0  # plain BM25: the short disease texts mentioning FBN1 come first
    assert index.search("FBN1", 1)[0][0] == 0 and index.search("fbn1 gene", 1)[0][0] == 0
    assert {n for n, _ in index.search("marfan syndrome", 2)} == {1, 2}
    assert index.search("OMIM:154700", 1)[0][0] == 1 and index.search("ORPHA:558", 1)[0][0] == 2
    assert index.search("seizures", 1)[0][0] == 4 and index.search("partial seizure", 1)[0][0] == 5
    # The names come from the graph's name_fields (its loader's choice), recorded in the settings; override them:
    ids_are_not_names = open_index(graph, names={"*": ["name"]}, progress=False)
    assert ids_are_not_names.search("154700", 5) == [] and index.search("154700", 1)[0][0] == 1
    with pytest.raises(ValueError, match="scoring='fielded' only"):
        open_index(graph, scoring="plain", name_weight=2.0, progress=False)
    with pytest.raises(ValueError, match="unknown scoring 'bm25f'"):
        open_index(graph, scoring="bm25f", progress=False)


def test_fielded_settings_are_cached_apart(tmp_path):

    save_graph(_graph(), tmp_path / "g")
    loaded = load_graph(tmp_path / "g")
    open_index(loaded, progress=False)
    open_index(loaded, scoring="plain", progress=False)
    open_index(loaded, name_weight=5.0, progress=False)
    assert len(list((tmp_path / "g" / "index").iterdir())) == 3
    again = open_index(load_graph(tmp_path / "g"), progress=False)
    assert again.index.exact is not None and again.search("OMIM:154700", 1)[0][0] == 1


def _exact_names_reference(names):
    """The table as a dict of sets (the first implementation): key hash -> sorted distinct nodes."""
    pairs: dict[int, set[int]] = {}
    for node, values in enumerate(names):
        for value in values:
            if exact_key(value):
                pairs.setdefault(_hash(exact_key(value)), set()).add(node)
    return {h: sorted(nodes) for h, nodes in pairs.items()}


def test_exact_names_collected_in_chunks_equal_the_dict_of_sets(monkeypatch):
    monkeypatch.setattr(ExactNamesBuilder, "CHUNK", 7)  # many chunks, a key's nodes spread over several
    rng = np.random.default_rng(0)
    vocabulary = ["FBN1", "fbn1", "Marfan syndrome", "marfan-SYNDROME", "", "  ", "OMIM:154700", "x", "Seizure"]
    names = [list(rng.choice(vocabulary, int(rng.integers(0, 4)))) for _ in range(300)]
    table = ExactNames.build(names)
    expected = _exact_names_reference(names)
    assert table.keys.tolist() == sorted(expected) and table.keys.dtype == np.uint64
    got = {int(h): table.nodes[table.indptr[i]: table.indptr[i + 1]].tolist() for i, h in enumerate(table.keys)}
    assert got == expected
    empty = ExactNames.build([[], [""]])
    assert len(empty) == 0 and empty.indptr.tolist() == [0] and empty.lookup("x").tolist() == []


@pytest.mark.parametrize("keys_a_bucket", [1, 4, 64, 10**6])  # from many empty buckets to one bucket of all keys
def test_exact_lookup_through_the_buckets_equals_the_dict_of_sets(monkeypatch, keys_a_bucket):
    """Every name's key finds its nodes and no other query finds any, whatever the buckets' sizes (the table's
    top-bit buckets: some empty, some of many keys)."""
    monkeypatch.setattr(exact_module, "KEYS_A_BUCKET", keys_a_bucket)
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(60)]
    names = [[" ".join(rng.choice(words, int(rng.integers(1, 3)))) for _ in range(int(rng.integers(0, 3)))]
             for _ in range(2000)]
    table, expected = ExactNames.build(names), _exact_names_reference(names)
    for values in names[:400]:
        for value in values:
            assert table.lookup(value.upper()).tolist() == expected[_hash(exact_key(value))]
    for absent in ["w1 w2 w3", "nothing", "w61", "-"]:
        assert table.lookup(absent).tolist() == expected.get(_hash(exact_key(absent)), [])


def test_node_names_are_read_in_batches_without_keeping_the_name_column(monkeypatch):
    import ark.index.graph_index as graph_index

    monkeypatch.setattr(graph_index, "NAME_BATCH", 4)  # 6 nodes: two batches
    graph = _graph()
    keys = resolve_name_keys(graph)
    expected = []
    for i in range(graph.num_nodes):
        props = graph.properties(i)
        values = []
        for key in keys[graph.node_type(i)]:
            value = graph.name(i) if key == "name" else graph.node_id(i) if key == "id" else props.get(key)
            values += [str(v) for v in value] if isinstance(value, list) else [str(value)] if value else []
        expected.append(list(dict.fromkeys(values)))
    fresh = _graph()
    assert list(node_names(fresh, keys)) == expected
    assert "_names" not in fresh.__dict__ and "_ids" not in fresh.__dict__  # no whole column as Python strings
