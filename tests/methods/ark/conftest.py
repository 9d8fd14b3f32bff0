"""Fixtures of the ARK tests: the small epilepsy/migraine graph and its BM25 index (modules may override them)."""

from __future__ import annotations

import pytest

from tests.support.graphs import build_index, build_small_graph


@pytest.fixture(scope="module")
def graph():
    return build_small_graph()


@pytest.fixture(scope="module")
def index(graph):
    return build_index(graph)


@pytest.fixture(scope="module")
def hpo_ark(hpo_home):
    """The real HPO graph and an offline ARK on it (slow tests; the graph is built once per run)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ARK_HOME", str(hpo_home))
        from ark.loaders import open_graph
        from ark.methods.ark.api import ARK

        graph = open_graph("hpo")
        yield graph, ARK(graph)
