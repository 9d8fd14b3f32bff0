"""GraphTextIndex / open_index over a small real graph: type filters, per-type fields, on-disk cache."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from ark.graph import EdgeTable, KnowledgeGraph, NodeTable, build_graph, load_graph, save_graph
from ark.index import BM25Index, GraphTextIndex, TextIndex, open_index


def _graph(seizure_text: str = "Seizure: an abnormal electrical discharge in the brain") -> KnowledgeGraph:
    nodes = NodeTable(
        ids=["HP:1", "HP:2", "OMIM:1", "GENE:1"],
        types=["phenotype", "phenotype", "disease", "gene"],
        names=["Seizure", "Fever", "Dravet syndrome", "SCN1A"],
        texts=[
            seizure_text,
            "Fever: elevated body temperature",
            "Dravet syndrome: severe epilepsy with febrile seizures in infancy",
            "SCN1A sodium channel gene; mutations cause seizures",
        ],
        properties=[None, None, {"synonyms": ["severe myoclonic epilepsy", "SMEI"]}, {"symbol": "SCN1A"}],
    )
    edges = EdgeTable(sources=["OMIM:1", "OMIM:1"], targets=["HP:1", "HP:2"], relations=["has_phenotype"] * 2)
    return build_graph(nodes, edges, metadata={"name": "tiny"})


def test_search_filters_by_node_type_and_scores_subsets():
    graph = _graph()
    index = open_index(graph, progress=False)
    assert isinstance(index, TextIndex)
    hits = index.search("seizures", 10)
    assert {node for node, _ in hits} == {2, 3}  # no stemming by default: "Seizure" does not match
    assert all(a[1] >= b[1] for a, b in zip(hits, hits[1:], strict=False))
    assert [n for n, _ in index.search("seizures", 10, node_types="Disease")] == [2]
    assert {n for n, _ in index.search("seizures", 10, node_types=["gene", "disease"])} == {2, 3}
    with pytest.raises(ValueError, match="phenotype"):
        index.search("seizures", 10, node_types="protein")
    scores = index.score("seizures", [3, 1, 2])
    assert scores[1] == 0 and scores[0] > 0 and scores[2] > 0
    assert index.score("seizures", []).shape == (0,)
    assert index.matched_terms("febrile seizures", 2) == ["febrile", "seizures"]


def test_fields_build_per_type_documents():
    graph = _graph()
    plain = open_index(graph, scoring="plain", progress=False)
    assert plain.search("SMEI", 5) == []
    assert [n for n, _ in open_index(graph, progress=False).search("SMEI", 5)] == [2]  # a synonym is a name
    with_fields = open_index(graph, fields={"disease": ["name", "synonyms"]}, scoring="plain", progress=False)
    assert [n for n, _ in with_fields.search("SMEI myoclonic", 5)] == [2]
    assert with_fields.search("infancy", 5) == []  # the disease's text is no longer its document


def test_open_index_caches_beside_the_graph_and_rebuilds_on_change(tmp_path):
    graph = _graph()
    save_graph(graph, tmp_path / "g")
    loaded = load_graph(tmp_path / "g")
    first = open_index(loaded, progress=False)
    cache_dirs = list((tmp_path / "g" / "index").iterdir())
    assert len(cache_dirs) == 1 and cache_dirs[0].name.startswith("bm25-")
    assert isinstance(first.index.postings.doc_deltas.base, np.memmap)
    manifest = json.loads((cache_dirs[0] / "manifest.json").read_text())
    assert manifest["fingerprint"] == loaded.metadata["fingerprint"]

    stamp = (cache_dirs[0] / "meta.json").stat().st_mtime_ns
    again = open_index(load_graph(tmp_path / "g"), progress=False)
    assert (cache_dirs[0] / "meta.json").stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert again.search("fever", 3) == first.search("fever", 3)

    # Different settings live in a different directory.
    open_index(loaded, progress=False, k1=1.2)
    assert len([p for p in (tmp_path / "g" / "index").iterdir() if not p.name.startswith(".")]) == 2

    # A changed graph (new fingerprint) saved at the same place triggers a rebuild.
    save_graph(_graph("Convulsion only"), tmp_path / "g2")
    changed = load_graph(tmp_path / "g2")
    changed.path = loaded.path
    rebuilt = open_index(changed, progress=False)
    assert rebuilt.search("seizure", 5) != first.search("seizure", 5)
    assert rebuilt.search("convulsion", 5)[0][0] == 0


def test_mismatched_index_and_bad_kind_are_rejected():
    graph = _graph()
    with pytest.raises(ValueError, match="3 documents but the graph has 4 nodes"):
        GraphTextIndex(graph, BM25Index.build(["a b", "c d", "e f"]))
    with pytest.raises(ValueError, match="unknown index kind 'sparse'"):
        open_index(graph, kind="sparse")


def test_bm25_rel_is_cached_with_a_manifest_and_indexes_neighbor_names(tmp_path):
    from ark.loaders.documents import relational_document

    save_graph(_graph(), tmp_path / "g")
    loaded = load_graph(tmp_path / "g")
    plain = open_index(loaded, scoring="plain", progress=False)
    rel = open_index(loaded, kind="bm25-rel", scoring="plain", progress=False)
    # "Fever" is only in the disease's relational document (as a neighbor name), not in its own text.
    assert 2 not in [n for n, _ in plain.search("fever", 5)]
    assert 2 in [n for n, _ in rel.search("fever", 5)]
    assert rel.search("fever", 5) == GraphTextIndex(
        loaded, BM25Index.build([relational_document(loaded, i) for i in range(4)])).search("fever", 5)
    [cache] = [p for p in (tmp_path / "g" / "index").iterdir() if p.name.startswith("bm25-rel-")]
    manifest = json.loads((cache / "manifest.json").read_text())
    assert manifest["settings"]["kind"] == "bm25-rel" and manifest["fingerprint"] == loaded.metadata["fingerprint"]
    stamp = (cache / "meta.json").stat().st_mtime_ns
    open_index(load_graph(tmp_path / "g"), kind="bm25-rel", scoring="plain", progress=False)
    assert (cache / "meta.json").stat().st_mtime_ns == stamp  # reused


def test_plain_bm25_cache_name_is_unchanged(tmp_path):
    # Existing plain caches (e.g. the HPO index) are found by this name: new kinds and settings must not change it.
    save_graph(_graph(), tmp_path / "g")
    open_index(load_graph(tmp_path / "g"), scoring="plain", progress=False)
    assert [p.name for p in (tmp_path / "g" / "index").iterdir()] == ["bm25-e2ce91a0c50f"]


def test_graph_folder_that_cannot_hold_an_index_is_indexed_in_memory(tmp_path):
    save_graph(_graph(), tmp_path / "g")
    (tmp_path / "g" / "index").write_text("not a folder")  # the cache folder cannot be created
    index = open_index(load_graph(tmp_path / "g"), kind="bm25-rel", progress=False)
    assert 2 in [n for n, _ in index.search("fever", 5)]
    assert (tmp_path / "g" / "index").read_text() == "not a folder"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs file permissions (not root)")
def test_read_only_graph_folder_is_indexed_in_memory(tmp_path):
    save_graph(_graph(), tmp_path / "g")
    loaded = load_graph(tmp_path / "g")
    (tmp_path / "g").chmod(0o555)
    try:
        index = open_index(loaded, kind="bm25-rel", progress=False)
        assert 2 in [n for n, _ in index.search("fever", 5)]
        assert not (tmp_path / "g" / "index").exists()
    finally:
        (tmp_path / "g").chmod(0o755)


def test_bm25_reads_the_text_column_like_node_documents():
    """With plain scoring and no fields the bm25 kind hands the graph's text column to the index, as Arrow strings;
    fielded scoring (the default) pairs each text with the node's names."""
    import ark.index.kinds  # noqa: F401  (registers the kinds)
    from ark.index.graph_index import INDEX_KINDS, node_documents

    graph = _graph()
    kind = INDEX_KINDS["bm25"]
    column = kind.documents(graph, kind.settings({"scoring": "plain"}, None), None)
    assert column.to_pylist() == list(node_documents(graph))
    fields = {"disease": ["name", "synonyms"]}
    plain = kind.settings({"scoring": "plain"}, fields)
    assert list(kind.documents(graph, plain, fields)) == list(node_documents(graph, fields))
    fielded = list(kind.documents(graph, kind.settings({"names": {}}, None), None))
    assert [text for _, text in fielded] == list(node_documents(graph))


def test_an_index_of_an_older_format_is_rebuilt_with_one_line_saying_so(tmp_path, capsys):
    graph = _graph()
    save_graph(graph, tmp_path / "g")
    first = open_index(load_graph(tmp_path / "g"), progress=False)
    (cache,) = [p for p in (tmp_path / "g" / "index").iterdir() if not p.name.startswith(".")]
    meta = json.loads((cache / "meta.json").read_text())
    (cache / "meta.json").write_text(json.dumps({**meta, "format": 1}))
    manifest = json.loads((cache / "manifest.json").read_text())  # an older ARK wrote no checksums
    (cache / "manifest.json").write_text(json.dumps({k: v for k, v in manifest.items() if k != "files"}))
    capsys.readouterr()
    again = open_index(load_graph(tmp_path / "g"), progress=False)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "rebuilding the bm25 index" in lines[0] and "format 1" in lines[0]
    assert again.search("fever", 3) == first.search("fever", 3)
    assert json.loads((cache / "meta.json").read_text())["format"] == meta["format"]
