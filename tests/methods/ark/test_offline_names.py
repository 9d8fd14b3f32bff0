"""The offline policy on questions that ask what something is called ("What is the clinical term for X?", "the
phenotype that laypeople call x"): the node bearing that name or synonym answers first. A guard for the layperson
synonym questions, which a reading of "clinical term" as a request the graph lacks once turned into no answer.
Runs on the conditions graph of ``tests/support/graphs.py``, whose findings list layperson synonyms."""

from __future__ import annotations

import pytest

from ark.index import open_index
from ark.methods.ark.api import ARK
from ark.methods.ark.options import ToolConfig
from tests.support.graphs import build_conditions_graph


@pytest.fixture(scope="module")
def graph():
    return build_conditions_graph()


@pytest.fixture(scope="module")
def ark(graph):
    return ARK(graph, index=open_index(graph, progress=False), tool_config=ToolConfig(neighborhood_budget=20))


@pytest.mark.parametrize(("question", "answer"), [
    ('What is the clinical term for "Spider fingers"?', "HP:0001166"),
    ("Which medical term do clinicians use for dislocated lens?", "HP:0001083"),
    ('A patient describes their problem as "Increased body height". Which phenotype term is that?', "HP:0000098"),
    ("Find the phenotype that laypeople call long slender fingers.", "HP:0001166"),
    # A type word inside the name asked about ("... skin *disease*") does not make a disease the wanted type.
    ("Which medical term do clinicians use for translucent skin disease?", "HP:0000963"),
    # The clause "laypeople call involuntary rhythmic eye movements" paraphrases Nystagmus's definition: it must
    # not become a finding whose neighbours (its subtypes) answer in its place.
    ("Find the phenotype that laypeople call involuntary rhythmic eye movements.", "HP:0000639"),
])
def test_the_node_bearing_the_name_asked_about_ranks_first(ark, question, answer):
    result = ark.retrieve(question)
    assert result.ranked, "no answer"
    assert result.ranked[0].node_id == answer
    assert result.confidence == "high"
    assert "is a name or synonym of" in result.confidence_reason
