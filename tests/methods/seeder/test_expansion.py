"""K-HOP-WITH-FILTERING scoring on a hand-made graph, and the CSR helpers it stands on."""

from __future__ import annotations

import numpy as np
import pytest

from ark.graph import EdgeTable, NodeTable, build_graph
from ark.methods.seeder.expansion import gather_rows, induced_edges, khop_with_filter, two_hop_neighborhood
from tests.support.graphs import build_clinical_graph

#            a    b     c    d    e    f    g    h
SIMS = np.array([0.9, 0.25, 0.5, 0.1, 0.8, 0.3, 0.95, 0.6], dtype=np.float32)
REL_SIMS = np.array([0.3, 0.6], dtype=np.float32)  # r0, r1


@pytest.fixture(scope="module")
def graph():
    names = list("abcdefgh")
    edges = [("a", "b", "r0"), ("a", "c", "r1"), ("d", "a", "r0"), ("b", "e", "r1"), ("c", "e", "r0"),
             ("c", "f", "r0"), ("b", "h", "r0")]
    src, dst, rel = zip(*edges, strict=True)
    built = build_graph(NodeTable(names, ["n"] * 8, names, names, source="hand"), EdgeTable(src, dst, rel))
    assert built.relation_types == ["r0", "r1"]
    return built


def idx(graph, *names):
    return [graph.index_of(n) for n in names]


def test_scores_follow_the_one_third_rule(graph):
    a, b, c, e, h = idx(graph, "a", "b", "c", "e", "h")
    out = khop_with_filter(graph, SIMS, REL_SIMS, [a], hop_budgets=[2, 2])
    # hop 1 from a: c = (.5 + .9 + .6)/3, b = (.25 + .9 + .3)/3, d = (.1 + .9 + .3)/3 (an incoming edge) is cut
    # hop 2 from {c, b}: e's best parent is b via r1 (.8 + .25 + .6)/3 = .55 > via c (.8 + .5 + .3)/3;
    # h = (.6 + .25 + .3)/3 beats f = (.3 + .5 + .3)/3; g is never reached despite its similarity
    assert out.nodes.tolist() == [a, c, b, e, h]
    np.testing.assert_allclose(out.scores, [0.9, 2.0 / 3, 1.45 / 3, 0.55, 1.15 / 3], rtol=1e-6)
    assert out.hops.tolist() == [0, 1, 1, 2, 2]
    assert out.parents.tolist() == [-1, a, a, b, b] and out.relations.tolist() == [-1, 1, 0, 1, 0]
    ranked, scores = out.ranking()
    assert ranked.tolist() == [a, c, e, b, h] and np.all(np.diff(scores) <= 0)


def test_budget_and_incoming_edges(graph):
    a, b, c, d, e = idx(graph, "a", "b", "c", "d", "e")
    assert khop_with_filter(graph, SIMS, REL_SIMS, [a], [2, 2], budget=4).nodes.tolist() == [a, c, b, e]
    assert d in khop_with_filter(graph, SIMS, REL_SIMS, [a], [3]).nodes.tolist()  # edges are followed both ways
    with pytest.raises(ValueError, match="smaller than the number of seeds"):
        khop_with_filter(graph, SIMS, REL_SIMS, [a, c], [1], budget=1)


def test_gather_and_induced_edges_match_the_graph_api():
    graph = build_clinical_graph()
    rows = np.array([0, 5, graph.index_of("OMIM:154700")])
    entries = gather_rows(graph, rows)
    for position, row in enumerate(rows):
        expected = graph.neighbors(int(row))
        mine = entries.row == position
        assert entries.neighbor[mine].tolist() == expected.nodes.tolist()
        assert entries.relation[mine].tolist() == expected.relations.tolist()
        assert (~entries.incoming[mine]).tolist() == expected.outgoing.tolist()
    nodes = np.array([graph.index_of(i) for i in ("OMIM:154700", "HP:0001083", "HP:0000478", "NCBIGene:2200")])
    src, dst, relation = induced_edges(graph, nodes, outgoing_only=True)
    triples = {(graph.node_id(int(nodes[s])), graph.relation_types[r], graph.node_id(int(nodes[d])))
               for s, d, r in zip(src, dst, relation, strict=True)}
    assert triples == {("OMIM:154700", "has_phenotype", "HP:0001083"), ("HP:0001083", "is_a", "HP:0000478"),
                       ("OMIM:154700", "associated_gene", "NCBIGene:2200")}
    messages = induced_edges(graph, nodes)
    assert len(messages[0]) == 2 * len(triples)  # each edge once from each end


def test_two_hop_neighborhood_is_capped_by_similarity():
    graph = build_clinical_graph()
    sims = np.linspace(0, 1, graph.num_nodes, dtype=np.float32)
    seed = graph.index_of("OMIM:154700")
    full = two_hop_neighborhood(graph, [seed], sims, max_nodes=10_000)
    capped = two_hop_neighborhood(graph, [seed], sims, max_nodes=8)
    assert full.nodes[0] == seed and set(capped.nodes) <= set(full.nodes) and len(capped.nodes) == 8
    assert full.hops.max() == 2
