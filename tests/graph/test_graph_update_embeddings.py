"""Embedding caches follow graph updates: an update embeds only the nodes whose document is new, the rest of the
vectors come from earlier versions (across compactions too), and the dense ranking equals a rebuild's."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ark.index.dense as dense
from ark.graph import KnowledgeGraph, load_graph, save_graph
from ark.graph.versioning import compact_graph, update_graph
from ark.index import open_index
from ark.index.embedders import node_embeddings
from ark.index.graph_index import node_documents
from tests.graph.update_model import ContentModel, random_delta
from tests.support.embeddings_server import KeywordEmbedder, keyword_vector
from tests.support.graphs import build_clinical_graph, build_drug_graph

STEPS = 4


class CountingEncoder:
    """A sentence-transformers stand-in (no model weights here): keyword vectors, every text it encodes counted."""

    def __init__(self) -> None:
        self.texts = 0

    def get_embedding_dimension(self) -> int:
        return 64

    def encode(self, texts: Any, **_: Any) -> np.ndarray:
        self.texts += len(texts)
        return np.stack([keyword_vector(t or "") for t in texts]).astype(np.float32) if len(texts) else \
            np.zeros((0, 64), np.float32)


class CountingEmbedder(KeywordEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed(self, texts: Any, batch_size: int = 64) -> np.ndarray:
        self.texts += len(texts)
        return super().embed(texts, batch_size)


def _keys(graph: KnowledgeGraph) -> set[tuple[str, str]]:
    return set(zip(graph.nodes.column("id").to_pylist(), node_documents(graph), strict=True))


def _ranking(graph: Any, index: Any, query: str) -> list[tuple[str, float]]:
    """The whole ranking by node id, ties broken by id."""
    pairs = index.search(query, graph.num_nodes)
    return sorted(((graph.node_id(i), round(s, 6)) for i, s in pairs), key=lambda p: (-p[1], p[0]))


def _updates(folder: Path, seed: int, build: Any) -> Any:
    """Random updates (one compaction on the way) of a saved fixture graph; yields (updated graph, rebuild, the
    number of (node id, document) pairs no earlier version had)."""
    rng = random.Random(seed)
    graph = build()
    save_graph(graph, folder)
    model = ContentModel(graph)
    seen = _keys(load_graph(folder))
    yield load_graph(folder), model.rebuild(), len(seen)
    for step in range(1, STEPS + 1):
        delta = random_delta(model, rng, step)
        update_graph(folder, delta)
        model.apply(delta)
        if step == 2:
            compact_graph(folder)
        updated = load_graph(folder)
        fresh = _keys(updated) - seen
        seen |= fresh
        yield updated, model.rebuild(), len(fresh)


@pytest.mark.parametrize("seed,build", [(0, build_clinical_graph), (1, build_drug_graph)])
def test_dense_index_embeds_only_new_documents_and_ranks_as_a_rebuild(tmp_path: Path, seed: int, build: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    encoder = CountingEncoder()
    monkeypatch.setattr(dense, "load_encoder", lambda *a, **k: encoder)
    rng = random.Random(seed)
    embedded = []
    for updated, rebuilt, fresh in _updates(tmp_path / "g", seed, build):
        before = encoder.texts
        index = open_index(updated, "dense", progress=False)
        embedded.append((encoder.texts - before, fresh))
        reference = open_index(rebuilt, "dense", progress=False)  # in memory: every node embedded
        words = sorted({w for i in range(rebuilt.num_nodes) for w in rebuilt.text(i).split()})
        for _ in range(20):
            query = " ".join(rng.sample(words, k=rng.randint(1, 3)))
            assert _ranking(updated, index, query) == _ranking(rebuilt, reference, query)
    assert all(count == fresh for count, fresh in embedded), embedded
    assert sum(fresh for _, fresh in embedded[1:]) < embedded[0][1] * STEPS  # updates embedded less than rebuilds


def test_node_embeddings_follow_updates(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    for updated, rebuilt, fresh in _updates(tmp_path / "g", 3, build_clinical_graph):
        before = embedder.texts
        vectors = node_embeddings(updated, embedder, progress=False)
        assert embedder.texts - before == fresh
        expected = np.stack([keyword_vector(t) for t in node_documents(rebuilt)])
        np.testing.assert_allclose(vectors, expected, rtol=1e-5, atol=1e-6)
    folder = tmp_path / "g"

    def caches() -> list[str]:
        return sorted(str(p.parent.parent.relative_to(folder)) for p in folder.rglob("embed-*"))

    # One cache per version, none overwritten; the compaction to version 2 pruned version 0's and kept version 1's,
    # which the new base's cache took its rows from.
    assert caches() == ["bases/000002", "deltas/000001", "deltas/000003", "deltas/000004"]
    compact_graph(folder)  # version 4 has its cache: every earlier one goes
    assert caches() == ["deltas/000004"]
    before = embedder.texts
    node_embeddings(load_graph(folder), embedder, progress=False)
    assert embedder.texts == before and caches() == ["bases/000004", "deltas/000004"]
