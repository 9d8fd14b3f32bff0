"""GRBench loaders on small hand-written fixtures in Graph-CoT's layout (tests/fixtures/grbench/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ark.graph import GraphValidationError, KnowledgeGraph, load_graph
from ark.loaders.grbench import AnswerMatcher, import_grbench, load_grbench, load_grbench_questions

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grbench"


def neighbors(graph: KnowledgeGraph, node_id: str, relation: str, direction: str) -> set[str]:
    found = graph.neighbors(graph.index_of(node_id), relation, direction)
    return {graph.node_id(int(i)) for i in found.nodes}


def test_biomedical_edges_are_oriented_by_their_label_and_not_doubled():
    graph = load_grbench(FIXTURES / "biomedical")
    assert graph.type_counts() == {"Compound": 2, "Disease": 2, "Symptom": 2, "Side_Effect": 1}
    # stored on both endpoints, one edge each, compound -> disease
    assert neighbors(graph, "DOID:2", "Compound-treats-Disease", "in") == {"DB001", "DB002"}
    assert neighbors(graph, "DB001", "Compound-treats-Disease", "out") == {"DOID:1", "DOID:2"}
    assert neighbors(graph, "DB001", "Compound-treats-Disease", "in") == set()
    counts = graph.relation_counts()
    assert counts["Compound-treats-Disease"] == 3 and counts["Disease-presents-Symptom"] == 3
    # "Side Effect" in the label matches the node type Side_Effect
    assert neighbors(graph, "C01", "Compound-causes-Side Effect", "in") == {"DB001"}
    assert graph.metadata["dropped_edges"] == 1  # DB999 is not in the graph
    assert graph.metadata["name"] == "biomedical"


def test_names_documents_and_properties_come_from_features():
    graph = load_grbench(FIXTURES / "biomedical" / "graph.json")
    i = graph.index_of("DB001")
    assert graph.name(i) == "Examplomab"
    assert graph.text(i) == "Examplomab\ninchikey: InChIKey=AAAA-BBBB"
    assert graph.properties(i) == {"name": "Examplomab", "inchikey": "InChIKey=AAAA-BBBB"}


def test_academic_neighbor_lists_are_relations_from_their_owner():
    graph = load_grbench(FIXTURES / "academic", name="academic-fixture")
    assert graph.metadata["name"] == "academic-fixture"
    paper = graph.index_of("101")
    assert graph.name(paper) == "Graphs for fun" and graph.properties(paper)["year"] == 2001
    assert "abstract: We study graphs." in graph.text(paper)
    assert neighbors(graph, "101", "author", "out") == {"a1", "a2"}
    assert neighbors(graph, "a2", "paper", "out") == {"101", "102"}
    assert neighbors(graph, "101", "reference", "out") == {"102"}
    assert neighbors(graph, "102", "cited_by", "out") == {"101"}
    assert graph.metadata["dropped_edges"] == 1  # reference 999 is outside the graph


def test_questions_and_answer_matching():
    graph = load_grbench(FIXTURES / "biomedical")
    questions = load_grbench_questions(FIXTURES / "biomedical")
    assert [q.qid for q in questions] == ["0", "1", "2"]
    assert questions[1].answer == "Purpura, Thrombocytopenic, Idiopathic, Proteinuria"
    matcher = AnswerMatcher(graph)
    assert matcher.ids(questions[0].answer) == ["DB001", "DB002"]
    assert matcher.ids(questions[1].answer) == ["D01", "D02"]  # a name with commas is kept whole
    assert matcher.ids("proteinuria") == ["D02"] and matcher.ids("12") == []


def test_import_saves_a_graph_directory(tmp_path):
    out = import_grbench(FIXTURES / "academic", tmp_path / "graph")
    assert load_graph(out).num_nodes == 5


@pytest.mark.parametrize(("content", "message"), [
    ('{"papers": {}}', "not a '<type>_nodes' table"),
    ('{"paper_nodes": {"1": {"features": {}, "neighbors": {"author": "a1"}}}}', "must be a list"),
    ('{"paper_nodes": {"1": {"features": [], "neighbors": {}}}}', "'features' must be an object"),
    ("[1, 2", "not valid JSON"),
])
def test_malformed_graph_files_are_named(tmp_path, content, message):
    (tmp_path / "graph.json").write_text(content)
    with pytest.raises(GraphValidationError, match=message):
        load_grbench(tmp_path)


def test_malformed_question_lines_are_named(tmp_path):
    file = tmp_path / "data.json"
    file.write_text(json.dumps({"qid": "1", "question": "Q?", "answer": "A"}) + "\n" + '{"qid": "2"}\n')
    with pytest.raises(ValueError, match=r"line 2: missing field\(s\) question, answer"):
        load_grbench_questions(file)
    with pytest.raises(FileNotFoundError, match="graph.json"):
        load_grbench(tmp_path)
