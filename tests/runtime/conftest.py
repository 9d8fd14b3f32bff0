"""Fixtures of the runtime tests: the small graph and its BM25 index."""

from __future__ import annotations

import pytest

from tests.support.graphs import build_index, build_small_graph


@pytest.fixture(scope="module")
def graph():
    return build_small_graph()


@pytest.fixture(scope="module")
def index(graph):
    return build_index(graph)
