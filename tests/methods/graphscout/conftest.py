"""Fixtures of the GraphScout tests: the clinical graph, its Cypher database and name index, and one solver whose
sandboxes are reused across the tests of a module (a worker starts in about 0.35 s)."""

from __future__ import annotations

import pytest

from tests.support.graphs import build_clinical_graph

pytest.importorskip("ladybug")


@pytest.fixture(scope="module")
def clinical():
    return build_clinical_graph()


@pytest.fixture(scope="module")
def scout(clinical):
    """The offline solver (scripted policy) on the clinical graph, BM25 over names."""
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.graphscout.solver import GraphScout

    solver = GraphScout(clinical, options=GraphScoutOptions())
    yield solver
    solver.close()
    solver.engine.close()
