"""The offline policy on questions with several conditions, a family of named subtypes, a finding described by its
definition, or a relation the graph lacks (the conditions graph of ``tests/support/graphs.py``).

A neighbourhood budget of 2 makes every anchor's neighbourhood span several pages, so a conjunction is only right
when the policy reads past the first page and checks candidates against each condition.
"""

from __future__ import annotations

import json

import pytest

from ark.index import open_index
from ark.methods.ark.api import ARK
from ark.methods.ark.options import ToolConfig
from ark.runtime.records import Retrieval
from tests.support.graphs import (
    ATTRIBUTE_ANSWERS,
    ATTRIBUTE_QUESTION,
    COMPOUND_ANSWER,
    COMPOUND_QUESTION,
    CONJUNCTION_ANSWERS,
    CONJUNCTION_QUESTION,
    FAMILY_ANSWERS,
    FAMILY_QUESTION,
    TWO_HOP_ANSWERS,
    TWO_HOP_QUESTION,
    UNANSWERABLE_QUESTION,
    build_conditions_graph,
)


@pytest.fixture(scope="module")
def graph():
    return build_conditions_graph()


@pytest.fixture(scope="module")
def index(graph):
    return open_index(graph, progress=False)


def retrieve(graph, index, question: str, budget: int = 2) -> Retrieval:
    return ARK(graph, index=index, tool_config=ToolConfig(neighborhood_budget=budget)).retrieve(question)


def evidence(retrieval: Retrieval) -> dict[str, str]:
    """Node id -> the reasoning an agent gave when adding it."""
    out: dict[str, str] = {}
    for trajectory in retrieval.trajectories:
        for index, reason in trajectory.reasoning.items():
            out.setdefault(trajectory.answer_ids[trajectory.answer.index(index)], reason)
    return out


def test_a_family_of_named_subtypes_keeps_the_wanted_type_and_says_so(graph, index):
    result = retrieve(graph, index, FAMILY_QUESTION)
    top = result.ranked[:2]
    assert {n.node_id for n in top} == FAMILY_ANSWERS
    assert all(n.type == "phenotype" for n in result.ranked)  # never the diseases themselves
    assert "named like 'Ehlers-Danlos syndrome'" in evidence(result)["HP:0001382"]
    assert result.confidence == "medium"
    assert result.confidence_reason.startswith("No node is named 'Ehlers-Danlos syndrome'")


def test_a_conjunction_ranks_answers_with_every_condition_first_and_marks_partial_ones(graph, index):
    result = retrieve(graph, index, CONJUNCTION_QUESTION)
    assert {n.node_id for n in result.ranked[:2]} == CONJUNCTION_ANSWERS
    reasons = evidence(result)
    assert reasons["OMIM:154700"].startswith("Satisfies all 2 conditions: Arachnodactyly; Ectopia lentis.")
    # Both answers meet both conditions through one edge each: the graph does not order them, and says so.
    assert "Tied with 1: the graph does not distinguish them." in reasons["OMIM:154700"]
    partial = result.ranked[2].node_id
    assert reasons[partial].startswith("Partial match:") and "not found:" in reasons[partial]
    assert result.confidence == "medium" and "the first 2 answers are tied" in result.confidence_reason


def test_the_policy_pages_through_neighbourhoods_larger_than_the_budget(graph, index):
    result = retrieve(graph, index, CONJUNCTION_QUESTION)
    offsets = [json.loads(call.arguments).get("offset") for step in result.trajectories[0].steps
               for call in step.tool_calls if call.name == "search_in_neighborhood"]
    assert offsets.count(2) == 2  # the second page of both anchors (3 and 4 diseases, 2 per page)


def test_an_attribute_condition_filters_and_descendant_findings_count(graph, index):
    result = retrieve(graph, index, ATTRIBUTE_QUESTION)
    top = {n.node_id for n in result.ranked[:3]}
    assert top == ATTRIBUTE_ANSWERS  # type II only through Horizontal nystagmus (true-path rule)
    dominant = {"OMIM:310700", "OMIM:164100"}  # nystagmus with autosomal dominant inheritance
    assert not dominant & {n.node_id for n in result.ranked}


def test_a_finding_described_by_its_definition_anchors_a_compound_question(graph, index):
    result = retrieve(graph, index, COMPOUND_QUESTION)
    assert result.ranked[0].node_id == COMPOUND_ANSWER
    assert evidence(result)[COMPOUND_ANSWER].startswith(
        "Satisfies all 3 conditions: Autosomal recessive inheritance; FANCA; Pancytopenia.")
    assert result.confidence_reason == "'Pancytopenia' was found by its description."


def test_a_relation_the_graph_lacks_gets_a_low_confidence_and_a_reason(graph, index):
    result = retrieve(graph, index, UNANSWERABLE_QUESTION)
    assert result.confidence == "low"
    assert result.confidence_reason.startswith("The graph has no node type or relation for 'treatment'")
    assert [n.node_id for n in result.ranked] == ["OMIM:154700"]  # only what the question names
    assert "no relation for 'treatment'" in evidence(result)["OMIM:154700"]


def test_confidence_survives_the_record_round_trip(graph, index):
    result = retrieve(graph, index, UNANSWERABLE_QUESTION)
    record = result.to_dict()
    assert record["confidence"] == "low" and "treatment" in record["confidence_reason"]
    again = Retrieval.from_dict(json.loads(json.dumps(record)))
    assert (again.confidence, again.confidence_reason) == (result.confidence, result.confidence_reason)
    assert all(t["confidence"] == "low" for t in record["agents"])


def test_a_type_named_on_the_way_is_a_hop_not_a_condition(graph, index):
    """"Genes associated with *diseases* that present with X": the clause "diseases" names the type to go through,
    not a disease; a disease whose name holds the word ("... mycobacterial diseases") must not become a condition."""
    result = retrieve(graph, index, TWO_HOP_QUESTION, budget=20)
    assert {n.node_id for n in result.ranked[:4]} == TWO_HOP_ANSWERS
    assert "GENE:IL12RB1" not in {n.node_id for n in result.ranked}
    # Each gene is reached through one disease: a tie of four, not a confident order.
    assert result.confidence == "medium" and "the first 4 answers are tied" in result.confidence_reason
    assert len({n.tie_group for n in result.ranked[:4]}) == 1


def test_a_piece_of_a_name_the_question_states_in_full_is_not_an_anchor(graph, index):
    """"Nystagmus 2, congenital" is cut at its comma into mentions; "Nystagmus" (a finding) is a piece of the
    disease's name, not a second entity whose neighbours would answer."""
    result = retrieve(graph, index, "What phenotypes are associated with Nystagmus 2, congenital?", budget=20)
    ranked = [n.node_id for n in result.ranked]
    assert "HP:0000118" not in ranked  # Phenotypic abnormality: a neighbour of the finding Nystagmus only
    assert {"HP:0000666", "HP:0000098"} <= set(ranked[:3])  # Horizontal nystagmus, Tall stature
    assert result.confidence_reason.startswith("Answers are linked to Nystagmus 2, congenital")


def test_a_relation_no_condition_names_links_the_answers_to_every_condition(graph, index):
    """"The inheritance of A and B": the relation asked about links the answers to both diseases, so a finding they
    share (Arachnodactyly) does not answer."""
    question = "Which phenotypes describe the inheritance of Marfan syndrome and Loeys-Dietz syndrome 1?"
    result = retrieve(graph, index, question, budget=20)
    assert result.ranked[0].node_id == "HP:0000006"  # Autosomal dominant inheritance
    assert "HP:0001166" not in {n.node_id for n in result.ranked}  # Arachnodactyly: a phenotype of both
