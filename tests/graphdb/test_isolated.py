"""The out-of-process Cypher engine (what ``open_cypher`` opens for ladybug): a query that crashes the engine or
runs past its deadline costs that query only (an error naming what happened), the next query is answered by a
fresh worker, the deadline holds from outside, and the guard bounds nesting before anything runs."""

from __future__ import annotations

import os
import threading
import time

import pytest

from ark.graphdb import CypherCrashed, CypherError, CypherSyntaxError, CypherTimeout, WriteRefused, check_read_only
from ark.graphdb.guard import MAX_NESTING, MAX_UNARY_CHAIN
from tests.support.cypher_attacks import CRASH, DEEP_LISTS, FINE, HANG, NOT_CHAIN
from tests.support.graphs import build_clinical_graph

pytest.importorskip("ladybug")

from ark.graphdb import open_cypher  # noqa: E402
from ark.graphdb.isolated import IsolatedEngine, isolate  # noqa: E402
from ark.graphdb.ladybug_engine import open_ladybug  # noqa: E402


@pytest.fixture(scope="module")
def engine():
    opened = open_cypher(build_clinical_graph(), timeout_s=2)
    yield opened
    opened.close()


def test_open_cypher_runs_queries_in_a_warm_worker_process(engine):
    assert isinstance(engine, IsolatedEngine)
    assert engine.query(FINE).records() == [{"diseases": 6}]
    starts = engine.starts
    result = engine.query("MATCH (d:disease {id: $d})-[:associated_gene]->(g) RETURN g", {"d": "OMIM:154700"},
                          limit=5)
    assert result.columns == ["g"] and result.rows[0][0]["_label"] == "gene" and result.node_indices
    assert engine.starts == starts  # the same worker answered
    with pytest.raises(WriteRefused):
        engine.query("CREATE (n:gene {id: 'x'})")
    with pytest.raises(CypherError, match="missing parameter"):
        engine.query("MATCH (n {id: $x}) RETURN n")


def test_a_query_that_crashes_the_engine_costs_that_query_only(engine):
    with pytest.raises(CypherCrashed, match=r"crashed the database engine \(signal SIGSEGV\)"):
        engine.query(CRASH, timeout_s=60)
    assert engine.query(FINE).records() == [{"diseases": 6}]  # a fresh worker answers the next one


def test_a_query_past_its_deadline_is_stopped_from_outside(engine):
    started = time.monotonic()
    with pytest.raises(CypherTimeout, match="ran past its 1 s deadline and was stopped"):
        engine.query(HANG, timeout_s=1)
    assert time.monotonic() - started < 1 + 2
    assert engine.query(FINE).records() == [{"diseases": 6}]


def test_a_hung_query_does_not_hold_up_a_query_beside_it(engine):
    errors: list[BaseException] = []

    def hang() -> None:
        try:
            engine.query(HANG, timeout_s=2)
        except CypherTimeout as exc:
            errors.append(exc)

    thread = threading.Thread(target=hang)
    thread.start()
    time.sleep(0.3)
    started = time.monotonic()
    assert engine.query(FINE).records() == [{"diseases": 6}]  # the second worker
    assert time.monotonic() - started < 1.5
    thread.join(timeout=10)
    assert len(errors) == 1


@pytest.mark.parametrize(("query", "limit"), [(NOT_CHAIN, MAX_UNARY_CHAIN), (DEEP_LISTS, MAX_NESTING),
                                              ("RETURN " + "-" * 9 + "1", MAX_UNARY_CHAIN),
                                              ("RETURN " + "{a: " * 40 + "1" + "}" * 40, MAX_NESTING),
                                              ("RETURN " + "CASE WHEN true THEN " * 40 + "1" + " END" * 40,
                                               MAX_NESTING)])
def test_the_guard_bounds_nesting_and_unary_chains_naming_the_limit(query, limit):
    with pytest.raises(CypherSyntaxError, match=f"the limit is {limit}"):
        check_read_only(query)


def test_ordinary_nesting_passes_the_guard():
    check_read_only("RETURN " + "[" * MAX_NESTING + "1" + "]" * MAX_NESTING)
    check_read_only("MATCH (a)-[r]->(b)<--(c) WHERE NOT (a.x = -1) AND NOT NOT b.y RETURN 1 - -a.x, "
                    "CASE WHEN a.x > 0 THEN [x IN [1, 2] | {k: (x + 1)}] ELSE [] END")


def test_an_in_process_engine_is_isolated_for_model_queries():
    with open_ladybug(build_clinical_graph(), timeout_s=3) as trusted:
        wrapped = isolate(trusted)
        try:
            assert isinstance(wrapped, IsolatedEngine) and wrapped.path == trusted.path
            assert wrapped.timeout_s == 3 and wrapped.schema is trusted.schema
            assert wrapped.query(FINE).records() == [{"diseases": 6}]
            worker_pid = wrapped._idle[0].process.pid
            assert worker_pid != os.getpid()
        finally:
            wrapped.close()
        assert isolate(wrapped) is wrapped
