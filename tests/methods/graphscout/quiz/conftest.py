"""Fixtures of the GraphScout quizzer tests: the HPO-shaped clinical graph and a small film graph (another schema:
people, films, genres, studios; a relation between films; names with spaces)."""

from __future__ import annotations

import numpy as np
import pytest

from ark.graph import EdgeTable, KnowledgeGraph, NodeTable, build_graph
from tests.support.graphs import build_clinical_graph


def build_film_graph(seed: int = 3) -> KnowledgeGraph:
    """40 people, 30 films, 6 genres, 4 studios; random ``acted_in``, ``directed``, ``has_genre``, ``produced_by``
    and ``sequel_of`` edges (seeded)."""
    rng = np.random.default_rng(seed)
    ids, types, names, texts = [], [], [], []
    kinds = (("P", "person", 40, "Person"), ("F", "film", 30, "Film"), ("G", "genre", 6, "Genre"),
             ("S", "studio", 4, "Studio"))
    for prefix, node_type, count, noun in kinds:
        for k in range(count):
            ids.append(f"{prefix}{k}")
            types.append(node_type)
            names.append(f"{noun} {chr(65 + k % 26)}{k}")
            texts.append(f"{noun} number {k}.")
    edges: set[tuple[str, str, str]] = set()
    for _ in range(110):
        edges.add((f"P{rng.integers(40)}", f"F{rng.integers(30)}", "acted_in"))
    for k in range(30):
        edges.add((f"P{rng.integers(40)}", f"F{k}", "directed"))
        edges.add((f"F{k}", f"G{rng.integers(6)}", "has_genre"))
        if rng.random() < 0.4:
            edges.add((f"F{k}", f"G{rng.integers(6)}", "has_genre"))
        edges.add((f"F{k}", f"S{rng.integers(4)}", "produced_by"))
    for _ in range(8):
        a, b = rng.integers(30, size=2)
        if a != b:
            edges.add((f"F{a}", f"F{b}", "sequel_of"))
    src, dst, rel = zip(*sorted(edges), strict=True)
    return build_graph(NodeTable(ids, types, names, texts), EdgeTable(list(src), list(dst), list(rel)),
                       metadata={"name": "films"})


@pytest.fixture(scope="session")
def film_graph() -> KnowledgeGraph:
    return build_film_graph()


@pytest.fixture(scope="session")
def clinical_graph() -> KnowledgeGraph:
    return build_clinical_graph()


@pytest.fixture(scope="session")
def film_engine(film_graph):
    pytest.importorskip("ladybug")
    from ark.graphdb.ladybug_engine import open_ladybug

    engine = open_ladybug(film_graph)
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def clinical_engine(clinical_graph):
    pytest.importorskip("ladybug")
    from ark.graphdb.ladybug_engine import open_ladybug

    engine = open_ladybug(clinical_graph)
    yield engine
    engine.close()
