"""The offline policy on what a question asks *of* a named node: the relation a verb names when the only type word
lies inside the node's name ("How is Mendelian susceptibility to mycobacterial *diseases* inherited?"), and one
named node said of another ("the *mode of inheritance of* Marfan syndrome": a node linked to both, not the two
named nodes looked up). On the HPO-shaped conditions graph (tests/support/graphs.py)."""

from __future__ import annotations

import pytest

from ark.methods.ark.api import ARK
from tests.support.graphs import build_conditions_graph


@pytest.fixture(scope="module")
def ark():
    return ARK(build_conditions_graph())


def test_a_type_word_inside_the_name_leaves_the_answers_type_to_the_relation_named(ark):
    result = ark.retrieve("How is Mendelian susceptibility to mycobacterial diseases inherited?")
    assert result.ranked[0].name == "Autosomal recessive inheritance"
    assert result.confidence == "high"


@pytest.mark.parametrize(("question", "answer"), [
    ("What is the mode of inheritance of Marfan syndrome?", "Autosomal dominant inheritance"),
    ("What is the mode of inheritance of Homocystinuria?", "Autosomal recessive inheritance"),
])
def test_a_node_said_of_another_asks_for_what_links_them(ark, question, answer):
    result = ark.retrieve(question)
    assert result.ranked[0].name == answer
    assert {"Marfan syndrome", "Homocystinuria", "Mode of inheritance"}.isdisjoint(
        n.name for n in result.ranked[:2])


def test_names_listed_side_by_side_are_still_looked_up(ark):
    result = ark.retrieve("Look up Marfan syndrome and Homocystinuria.")
    assert {n.name for n in result.ranked[:2]} == {"Marfan syndrome", "Homocystinuria"}
