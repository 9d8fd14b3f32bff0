"""One embedder option everywhere: the ``dense`` method, ARK's dense relevance and GraphScout's node retriever take
the same ``embedder`` spec; ``openai:MODEL`` goes to an OpenAI-compatible /v1/embeddings endpoint (a loopback
server here) and ranks exactly as the same vectors computed in-process."""

from __future__ import annotations

import numpy as np
import pytest

from ark.index.graph_index import node_documents
from ark.methods import MethodContext, build_method
from ark.methods.ark.api import open_relevance_index
from ark.methods.ark.options import ArkOptions
from ark.methods.graphscout.options import GraphScoutOptions
from ark.methods.graphscout.solver import open_node_index
from tests.support.embeddings_server import EmbeddingsServer, keyword_vector
from tests.support.graphs import build_clinical_graph

QUERIES = ["heart valve problem with tall stature", "seizures starting in infancy", "gene of connective tissue"]


@pytest.fixture
def server():
    with EmbeddingsServer() as running:
        yield running


def local_ranking(texts: list[str], query: str, k: int) -> list[int]:
    # float32, as the dense index stores the endpoint's vectors: equal words give equal scores (ties broken by the
    # node index) instead of float64 rounding noise deciding between them
    vectors = np.stack([keyword_vector(t) for t in texts]).astype(np.float32)
    scores = vectors @ keyword_vector(query).astype(np.float32)
    return sorted(range(len(texts)), key=lambda i: (-scores[i], i))[:k]


def test_dense_method_with_an_openai_embedder_ranks_like_local_vectors(server):
    graph = build_clinical_graph()
    method = build_method("dense", graph, {"embedder": "openai:test-embedder", "embedder_base_url": server.base_url},
                          MethodContext())
    docs = list(node_documents(graph))
    for query in QUERIES:
        output = method.retrieve(query, 5)
        assert output.indices == local_ranking(docs, query, 5)
    embedded = [text for request in server.requests for text in request["input"]]
    assert set(QUERIES) <= set(embedded)  # the queries went to the endpoint too, not to MiniLM


def test_ark_dense_relevance_and_graphscout_retriever_take_the_embedder(server):
    graph = build_clinical_graph()
    spec = {"embedder": "openai:test-embedder", "embedder_base_url": server.base_url}
    relevance = open_relevance_index(graph, ArkOptions(relevance="dense", **spec))
    docs = list(node_documents(graph))
    assert [i for i, _ in relevance.search(QUERIES[0], 3)] == local_ranking(docs, QUERIES[0], 3)

    options = GraphScoutOptions.model_validate({"retriever": {"index": "dense", **spec}})
    names = open_node_index(graph, options)
    name_docs = list(node_documents(graph, {t: ["name"] for t in graph.node_types}))
    assert [i for i, _ in names.search("Marfan", 2)] == local_ranking(name_docs, "Marfan", 2)
    assert any("Marfan syndrome" in request["input"] for request in server.requests)  # names, not whole texts


def test_a_base_url_with_a_local_embedder_is_refused():
    with pytest.raises(ValueError, match="openai:MODEL"):
        build_method("dense", build_clinical_graph(), {"embedder_base_url": "http://127.0.0.1:9/v1"})


def test_query_embeddings_of_a_remote_embedder_are_cached_on_disk(server, tmp_path, monkeypatch):
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    graph = build_clinical_graph()
    options = {"embedder": "openai:test-embedder", "embedder_base_url": server.base_url}
    first = build_method("dense", graph, options).retrieve(QUERIES[1], 3)
    sent = len(server.requests)
    again = build_method("dense", graph, options).retrieve(QUERIES[1], 3)  # a new process would do the same
    assert again.indices == first.indices
    queries = [r for r in server.requests[sent:] if QUERIES[1] in r["input"]]
    assert queries == []  # the query came from the cache, not the endpoint
