"""The Table 1 graph baselines on the small clinical graph, with a keyword embedder (controllable similarities)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from pydantic import ValidationError

from ark.methods.seeder.baselines import (
    BASELINES,
    AStarOptions,
    AStarRetriever,
    BeamOptions,
    BeamSearchRetriever,
    PPRMMROptions,
    PPRMMRRetriever,
    PPROptions,
    PPRRetriever,
    make_baseline,
    personalized_pagerank,
)
from ark.methods.seeder.embeddings import open_graph_embeddings
from ark.methods.seeder.expansion import two_hop_neighborhood
from tests.support.embeddings_server import KeywordEmbedder
from tests.support.graphs import ONE_HOP, build_clinical_graph

QUERY = ONE_HOP[0]  # "Which genes are implicated in Marfan syndrome?"


@pytest.fixture(scope="module")
def graph():
    built = build_clinical_graph()
    open_graph_embeddings(built, KeywordEmbedder(dimension=1024), progress=False)  # registered under its identity
    return built


def options(name: str, **extra):
    return BASELINES[name].Options(embedder="unused", **extra)


@pytest.fixture(autouse=True)
def keyword_embedder(monkeypatch):
    """Route the baselines' embedder spec to the keyword embedder (no model download, exact similarities)."""
    import ark.methods.seeder.embeddings as embeddings

    monkeypatch.setattr(embeddings, "open_embedder", lambda spec: KeywordEmbedder(dimension=1024))


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_every_baseline_returns_a_clean_ranking(graph, name):
    if name == "pcst":
        pytest.importorskip("pcst_fast")
    method = make_baseline(name, graph, {"embedder": "unused"})
    out = method.retrieve(QUERY, 10)
    assert 0 < len(out.indices) <= 10 and len(set(out.indices)) == len(out.indices)
    assert all(graph.is_valid_index(i) for i in out.indices)
    assert all(a >= b for a, b in zip(out.scores, out.scores[1:], strict=False)), out.scores
    assert method.retrieve(QUERY, 10).indices == out.indices  # deterministic
    marfan = graph.index_of("OMIM:154700")
    assert marfan in out.indices[:3]  # the best dense seed stays near the top
    assert method.retrieve("", 10).indices == [] and method.retrieve(QUERY, 0).indices == []


def test_candidate_types_filter_the_output(graph):
    context = SimpleNamespace(candidate_types=["gene"], progress=False)
    out = make_baseline("khop-filter", graph, {"embedder": "unused"}, context).retrieve(QUERY, 5)
    assert out.indices and all(graph.node_type(i) == "gene" for i in out.indices)
    assert graph.index_of("NCBIGene:2200") == out.indices[0]  # FBN1, Marfan's gene, is the best gene


def test_ppr_matches_networkx_at_convergence(graph):
    nx = pytest.importorskip("networkx")
    sims = np.linspace(0.0, 1.0, graph.num_nodes, dtype=np.float32)
    hood = two_hop_neighborhood(graph, [graph.index_of("OMIM:154700")], sims, max_nodes=10_000)
    weights = np.zeros(len(hood.nodes))
    weights[0] = 1.0
    ours = personalized_pagerank(hood, weights, restart=0.15, iterations=300)
    g = nx.Graph()
    g.add_nodes_from(range(len(hood.nodes)))
    g.add_edges_from(zip(hood.src.tolist(), hood.dst.tolist(), strict=True))
    oracle = nx.pagerank(g, alpha=0.85, personalization={0: 1.0}, tol=1e-12, max_iter=1000)
    np.testing.assert_allclose(ours, [oracle[i] for i in range(len(hood.nodes))], atol=1e-8)


def test_ppr_mmr_trades_relevance_for_diversity(graph):
    ppr = PPRRetriever(graph, PPROptions(embedder="unused")).retrieve(QUERY, 15).indices
    relevance_only = PPRMMRRetriever(graph, PPRMMROptions(embedder="unused", mmr_lambda=1.0)).retrieve(QUERY, 15)
    assert relevance_only.indices == ppr
    method = PPRMMRRetriever(graph, PPRMMROptions(embedder="unused", mmr_lambda=0.0, keep=2, pool=15))
    picks = method.retrieve(QUERY, 15).indices
    vectors = method.embeddings.nodes
    redundancy = {n: float(vectors[n] @ vectors[ppr[0]]) for n in ppr[1:]}
    assert picks[0] == ppr[0] and picks[1] == min(redundancy, key=lambda n: (redundancy[n], ppr.index(n)))
    assert set(picks) == set(ppr)  # the rest of the pool follows


def test_beam_and_astar_respect_their_budgets(graph):
    beam = BeamSearchRetriever(graph, BeamOptions(embedder="unused", beam_width=1)).retrieve(QUERY, 50)
    assert len(beam.indices) <= 3 + 2 * 1
    astar = AStarRetriever(graph, AStarOptions(embedder="unused", max_expansions=1)).retrieve(QUERY, 50)
    marfan = graph.index_of("OMIM:154700")
    first_ring = set(graph.neighbors(marfan).nodes.tolist())
    seeds = set(astar.indices) - first_ring
    assert len(seeds) <= 3 and first_ring <= set(astar.indices)  # only the best seed was expanded


def test_options_are_checked(graph):
    with pytest.raises(ValueError, match="valid: khop-filter, ppr"):
        make_baseline("pagerank", graph)
    with pytest.raises(ValidationError, match="restart"):
        make_baseline("ppr", graph, {"restart": 1.5})
    with pytest.raises(ValidationError, match="Extra inputs"):
        make_baseline("beam", graph, {"beam": 3})
    with pytest.raises(TypeError, match="takes PPROptions"):
        PPRRetriever(graph, BeamOptions())
