"""The scripted GraphScout solver's Cypher (checked against answers computed by walking the graph in memory) and
the prompt's Cypher examples (every one is run against the engine)."""

from __future__ import annotations

import pytest

from ark.metrics import exact_match
from tests.support.graphs import build_clinical_graph, build_drug_graph

pytest.importorskip("ladybug")

from ark.graphdb.ladybug_engine import open_ladybug  # noqa: E402
from ark.methods.graphscout.cypher_writer import CypherWriter, answer_from_rows  # noqa: E402
from ark.methods.graphscout.prompt import cypher_examples, render_graph_section  # noqa: E402
from ark.methods.graphscout.synthetic import TEMPLATES, QuestionMaker  # noqa: E402


@pytest.fixture(scope="module")
def clinical():
    graph = build_clinical_graph()
    engine = open_ladybug(graph)
    yield graph, engine, CypherWriter(graph, engine.schema)
    engine.close()


def solve(writer, engine, question):
    plan = writer.plan(question)
    assert plan is not None, question
    return plan, answer_from_rows(plan, engine.query(plan.cypher, plan.params, limit=10_000).records())


@pytest.mark.parametrize(("question", "answer_type", "answer"), [
    ("How many genes are associated with Loeys-Dietz syndrome?", "number", "2"),
    ("How many diseases have the phenotype Arachnodactyly?", "number", "2"),
    ("How many genes are associated with diseases that have the phenotype Seizure?", "number", "2"),
    ("Which genes are associated with Loeys-Dietz syndrome?", "set", "TGFBR1, TGFBR2"),
    ("Which diseases are associated with the gene SCN1A?", "set", "Dravet syndrome"),
    ("What are the subtypes of Abnormality of the eye?", "set",
     "Ectopia lentis, Hypertelorism, Myopia"),
    ("Is FBN1 associated with Marfan syndrome?", "boolean", "yes"),
    ("Is F8 associated with Marfan syndrome?", "boolean", "no"),
    ("Does Dravet syndrome have the phenotype Febrile seizure?", "boolean", "yes"),
    ("Which gene is associated with Dravet syndrome?", "entity", "SCN1A"),
    ("What is the parent term of Febrile seizure?", "entity", "Seizure"),
    # several anchors: an intersection (Loeys-Dietz lacks ectopia lentis, Homocystinuria arachnodactyly)
    ("Which diseases have the phenotype Arachnodactyly and the phenotype Ectopia lentis?", "set", "Marfan syndrome"),
    # a quoted phrase filters the answers by their text, as whole words
    ("Which diseases have the phenotype Aortic root dilatation and mention 'aneurysm' in their description?", "set",
     "Loeys-Dietz syndrome"),
    # a relative clause: a hop through phenotypes, each hop with its own taxonomy direction
    ("Which phenotypes are parent terms of phenotypes that are features of Dravet syndrome?", "set",
     "Abnormality of the nervous system, Seizure"),
    ("Can you name the genes associated with Homocystinuria?", "set", "CBS"),  # a request, not a yes/no question
])
def test_questions_become_cypher_that_answers_them(clinical, question, answer_type, answer):
    graph, engine, writer = clinical
    plan, (text, indices) = solve(writer, engine, question)
    assert plan.answer_type == answer_type
    assert exact_match(text, answer, answer_type) == 1.0, (plan.cypher, text)
    if answer_type in ("set", "entity"):
        assert sorted(graph.name(i) for i in indices) == sorted(text.split(", ")) if answer_type == "set" else \
            graph.name(indices[0]) == text
    assert "$" in plan.cypher and plan.params  # anchors travel as parameters
    assert plan.python_code().startswith("rows = cypher(")


def test_names_are_linked_longest_first_and_gene_symbols_by_case(clinical):
    graph, _, writer = clinical
    linked = writer.anchors("Does Ehlers-Danlos syndrome, vascular type have the phenotype Bruising susceptibility?")
    assert [graph.node_id(i) for i in linked] == ["OMIM:130050", "HP:0000978"]
    assert writer.anchors("Is the f8 gene linked to anything?") == []  # short names must match their case
    assert writer.plan("How many genes are there?") is None  # no anchor: the scripted solver declines


def test_generated_questions_agree_with_the_graph_on_the_small_graph(clinical):
    graph, engine, writer = clinical
    maker = QuestionMaker(graph, seed=3)
    for answer_type in TEMPLATES:
        questions = maker.questions(answer_type, 4)
        assert questions, answer_type
        for question in questions:
            _, (text, _) = solve(writer, engine, question.question)
            assert exact_match(text, question.answer, answer_type) == 1.0, question


@pytest.mark.slow
def test_scripted_solver_on_generated_hpo_questions():
    from ark.loaders import open_graph

    graph = open_graph("hpo")
    engine = open_ladybug(graph)
    writer = CypherWriter(graph, engine.schema)
    maker = QuestionMaker(graph, seed=0)
    for answer_type in TEMPLATES:
        questions = maker.questions(answer_type, 50)
        assert len(questions) == 50
        right = 0
        for question in questions:
            plan = writer.plan(question.question)
            if plan is not None:
                text, _ = answer_from_rows(plan, engine.query(plan.cypher, plan.params, limit=100_000).records())
                right += exact_match(text, question.answer, answer_type) == 1.0
        assert right >= 45, (answer_type, right)
    engine.close()


@pytest.mark.parametrize("build", [build_clinical_graph, build_drug_graph])
def test_every_prompt_example_runs_and_finds_rows(build):
    graph = build()
    engine = open_ladybug(graph)
    try:
        examples = cypher_examples(graph, engine.schema)
        assert len(examples) >= 5
        for example in examples:
            result = engine.query(example.cypher, example.params, limit=100)
            assert result.rows, example
        text = render_graph_section(graph, engine.schema, examples)
        assert engine.schema.describe() in text
        assert all(example.code() in text for example in examples)
    finally:
        engine.close()
