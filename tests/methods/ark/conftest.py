"""Fixtures of the ARK tests: the small epilepsy/migraine graph and its BM25 index, the offline policy on the
graphs of other domains in tests/fixtures (films, packages and formats, foods) (modules may override them), and
``names``, the names of a result's first answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.graphs import build_index, build_small_graph

FIXTURES = Path(__file__).parents[2] / "fixtures"


def names(result, n: int = 5) -> list[str]:
    """The names of the first ``n`` answers, best first."""
    return [ranked.name for ranked in result.ranked[:n]]


def _offline_ark(folder: str):
    from ark.loaders.tabular import load_tabular
    from ark.methods.ark.api import ARK

    return ARK(load_tabular(FIXTURES / folder))


@pytest.fixture(scope="module")
def films():
    """The film graph (person, film, genre; directed, acted_in, has_genre)."""
    return _offline_ark("film_schema")


@pytest.fixture(scope="module")
def packages():
    """The package graph (depends_on, licensed_under) with a hierarchy of formats (subclass_of)."""
    return _offline_ark("package_schema")


@pytest.fixture(scope="module")
def foods():
    """Foods, plants and animals cut from WordNet."""
    return _offline_ark("food_schema")


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
