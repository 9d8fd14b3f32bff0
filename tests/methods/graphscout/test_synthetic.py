"""The synthetic question maker: every node can be a template's answer or partner, node index 0 included."""

from __future__ import annotations

from ark.graph import EdgeTable, NodeTable, build_graph
from ark.methods.graphscout.synthetic import QuestionMaker


def test_the_first_node_can_be_the_partner_of_a_boolean_question():
    """Phenotype "Arachnodactyly" is node 0 and the only phenotype the disease has: the yes-question must use it."""
    nodes = NodeTable(["HP:0001166", "MONDO:0007947", "HP:0000001"], ["phenotype", "disease", "phenotype"],
                      ["Arachnodactyly", "Marfan syndrome", "Phenotypic abnormality"],
                      ["Long slender fingers.", "A connective tissue disorder.", "Root term."])
    graph = build_graph(nodes, EdgeTable(["MONDO:0007947", "HP:0001166"], ["HP:0001166", "HP:0000001"],
                                         ["has_phenotype", "is_a"]))
    assert graph.node_id(0) == "HP:0001166"
    question = QuestionMaker(graph, seed=0).boolean(1, truth=True)
    assert question.question == "Does Marfan syndrome have the phenotype Arachnodactyly?"
    assert question.answer == "yes"
