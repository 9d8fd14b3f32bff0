"""The code interpreter as a model uses it: state across calls, cypher(), observations for every kind of failure,
restarts, both places a query can run, and the weaker fallback without bubblewrap."""

from __future__ import annotations

import os

import pytest

from ark.graphdb import CypherError
from ark.sandbox import CodeSandbox, SandboxLimits, SandboxUnavailable, bwrap_problem, isolation_mode
from tests.support.graphs import build_clinical_graph

pytest.importorskip("ladybug")

from ark.graphdb.ladybug_engine import open_ladybug  # noqa: E402

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap sandbox: {bwrap_problem()}")


@pytest.fixture(scope="module")
def engine():
    engine = open_ladybug(build_clinical_graph())
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def sandbox(engine):
    with CodeSandbox(engine, SandboxLimits(timeout_s=5, output_chars=500)) as sandbox:
        yield sandbox


class ForwardingEngine:
    """An engine the sandbox cannot open itself (like a Neo4j server): its queries travel over the pipe."""

    dialect = "neo4j"

    def __init__(self, inner):
        self.inner, self.schema, self.calls = inner, inner.schema, []

    def query(self, cypher, params=None, limit=None, timeout_s=None):
        self.calls.append((cypher, params, limit, timeout_s))
        return self.inner.query(cypher, params, limit, timeout_s)

    def close(self):
        pass


def test_variables_persist_between_calls_and_reset_between_trajectories(engine, sandbox):
    assert sandbox.run("genes = cypher('MATCH (g:gene) RETURN g.name AS name ORDER BY name')").ok
    assert sandbox.run("print(len(genes), genes[0])").stdout == "7 {'name': 'CBS'}\n"
    sandbox.reset()
    result = sandbox.run("print(genes)")
    assert result.error_kind == "exception" and "NameError" in result.error and not result.restarted
    with CodeSandbox(engine) as other:
        assert "NameError" in other.run("genes").error  # another trajectory starts empty


def test_the_value_of_a_final_expression_is_shown(sandbox):
    assert sandbox.run("x = 6\nx * 7").stdout == "42\n"
    assert sandbox.run("None").observation() == "[no output: use print(...) to see values]"


def test_cypher_rows_parameters_limit_and_touched_nodes(engine, sandbox):
    graph = build_clinical_graph()
    result = sandbox.run(
        "rows = cypher('MATCH (d:disease {name: $name})-[:has_phenotype]->(p) RETURN p ORDER BY p.name', "
        "params={'name': 'Dravet syndrome'}, limit=2)\nprint([r['p']['name'] for r in rows])")
    assert result.stdout == "['Febrile seizure', 'Global developmental delay']\n"
    assert result.cypher_calls[0]["rows"] == 2 and result.cypher_calls[0]["truncated"]
    assert result.node_indices == [graph.index_of("HP:0002373"), graph.index_of("HP:0001263")]


def test_cypher_errors_can_be_caught_by_the_code_or_come_back_as_observations(sandbox):
    caught = sandbox.run("try:\n    cypher('MATCH (n:gene RETURN n')\nexcept CypherError as e:\n    print('fix:', e)")
    assert caught.ok and caught.stdout.startswith("fix: Cypher syntax error")
    assert "MATCH (n:gene RETURN" in caught.stdout
    assert caught.cypher_calls[0]["error"] == "syntax"
    uncaught = sandbox.run("x = 1\n\ncypher('MATCH (n:protein) RETURN n')")
    assert uncaught.error_kind == "cypher" and uncaught.cypher_kind == "query"
    assert "Node tables: phenotype, disease, gene" in uncaught.error and "(line 3)" in uncaught.error
    too_many = SandboxLimits(timeout_s=5, cypher_max_rows=3)
    with CodeSandbox(sandbox.engine, too_many) as small:
        result = small.run("cypher('MATCH (n) RETURN n.id')")
        assert result.cypher_kind == "too_many_rows" and "limit=N" in result.error


def test_python_errors_are_short_and_point_at_the_code(sandbox):
    syntax = sandbox.run("for x in range(3)\n    print(x)")
    assert syntax.error_kind == "syntax" and "(line 1)" in syntax.error and "for x in range(3)" in syntax.error
    failure = sandbox.run("def f(d):\n    return d['missing']\n\nf({})")
    assert failure.error_kind == "exception"
    assert failure.error.splitlines() == ["Traceback (most recent call last):", "  line 4, in <module>", "    f({})",
                                          "  line 2, in f", "    return d['missing']", "KeyError: 'missing'"]
    assert "worker.py" not in failure.error
    assert sandbox.run(12).error_kind == "syntax"  # not a string: an observation, not an exception


def test_printed_output_is_capped(sandbox):
    result = sandbox.run("for i in range(1000):\n    print(i)")
    assert result.ok and result.output_truncated and len(result.stdout) == 500
    assert result.observation().endswith("[output truncated: print less, e.g. counts or the first rows]")


def test_a_crash_is_reported_and_the_next_call_gets_a_fresh_interpreter(engine):
    with CodeSandbox(engine) as sandbox:
        sandbox.run("kept = 1")
        crash = sandbox.run("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
        assert crash.error_kind == "crashed" and "SIGSEGV" in crash.error
        after = sandbox.run("print(1 + 1)")
        assert after.stdout == "2\n" and after.restarted and "variables from earlier calls are gone" in after.note
        assert sandbox.starts == 2


def test_queries_of_other_engines_travel_over_the_pipe(engine):
    forwarding = ForwardingEngine(engine)
    with CodeSandbox(forwarding, SandboxLimits(timeout_s=5, cypher_timeout_s=3)) as sandbox:
        assert sandbox.cypher_mode == "callback"
        result = sandbox.run("rows = cypher('MATCH (g:gene {name: $n}) RETURN g', {'n': 'FBN1'})\n"
                             "print(rows[0]['g']['id'])\ncypher('CREATE (n:gene {id: 1})')")
        assert result.stdout == "NCBIGene:2200\n" and result.cypher_kind == "write_refused"
        assert result.node_indices == [build_clinical_graph().index_of("NCBIGene:2200")]
    query, params, limit, timeout = forwarding.calls[0]
    assert params == {"n": "FBN1"} and limit is None and 0 < timeout <= 3


def test_the_local_engine_opens_the_database_inside(engine, sandbox):
    assert sandbox.cypher_mode == "local"
    assert sandbox.run("print(cypher('RETURN 1 AS one'))").stdout == "[{'one': 1}]\n"


def test_without_a_database_cypher_says_so():
    with CodeSandbox(None) as sandbox:
        result = sandbox.run("cypher('RETURN 1')")
        assert result.cypher_kind == "unavailable" and "no graph database" in result.error


@needs_bwrap
def test_the_code_runs_unprivileged_without_network_in_its_own_namespace(sandbox):
    result = sandbox.run("import os, socket\n"
                         "print(os.getuid(), os.getpid(), sorted(n for _, n in socket.if_nameindex()))")
    uid, pid, interfaces = result.stdout.split(" ", 2)
    assert pid == "2" and interfaces.strip() == "['lo']"
    if os.geteuid() == 0:
        assert int(uid) >= 200_000  # a fresh unprivileged uid, so process limits bind


def test_limits_are_validated():
    with pytest.raises(ValueError, match="timeout_s"):
        SandboxLimits(timeout_s=0)
    with pytest.raises(ValueError, match="cypher_mode"):
        CodeSandbox(None, cypher_mode="remote")
    with pytest.raises(ValueError, match="isolation"):
        isolation_mode("docker")


def test_missing_bubblewrap_refuses_unless_the_weaker_mode_is_chosen(monkeypatch, engine):
    import ark.sandbox.launcher as launcher

    monkeypatch.setenv("PATH", "/nonexistent")  # no bwrap on PATH
    launcher.bwrap_problem.cache_clear()
    launcher._warn_weak.cache_clear()
    try:
        for requested in ("auto", "bwrap"):
            with pytest.raises(SandboxUnavailable, match="install it .*apt-get install bubblewrap.*isolation=rlimit"):
                isolation_mode(requested)
        with pytest.raises(SandboxUnavailable):
            CodeSandbox(engine)
        with pytest.warns(RuntimeWarning, match="WEAKER mode"):
            sandbox = CodeSandbox(engine, SandboxLimits(timeout_s=3, max_processes=24), isolation="rlimit")
    finally:
        launcher.bwrap_problem.cache_clear()
    with sandbox:
        assert sandbox.mode == "rlimit"
        assert sandbox.run("print(cypher('MATCH (g:gene) RETURN count(g) AS n')[0]['n'])").stdout == "7\n"
        bomb = sandbox.run("import os\nwhile True:\n    os.fork()")
        assert "BlockingIOError" in bomb.error
        assert sandbox.run("print('alive')").stdout == "alive\n"


def test_cypher_error_class_is_the_one_code_sees(sandbox):
    assert sandbox.run("print(CypherError.__module__)").stdout == "ark.graphdb.errors\n"
    assert CypherError.__module__ == "ark.graphdb.errors"


def test_a_worker_that_spends_its_cpu_budget_is_replaced(engine):
    with CodeSandbox(engine, SandboxLimits(timeout_s=10, cpu_s=1)) as sandbox:
        result = sandbox.run("while True:\n    pass")
        assert result.error_kind == "crashed" and "CPU time budget" in result.error
        assert sandbox.run("print('fresh')").stdout == "fresh\n"


def test_a_worker_started_from_a_short_lived_thread_outlives_it(engine):
    # bubblewrap's --die-with-parent follows the thread that started the worker: starts go through one
    # long-lived thread, so asyncio.to_thread or a background start cannot take the worker down with them.
    import threading
    import time

    with CodeSandbox(engine, SandboxLimits(timeout_s=5)) as sandbox:
        starter = threading.Thread(target=sandbox.start)
        starter.start()
        starter.join()
        time.sleep(0.3)
        assert sandbox.running
        result = sandbox.run("print('alive')")
        assert result.stdout == "alive\n" and not result.restarted and sandbox.starts == 1


def test_cypher_calls_report_the_strings_they_were_given_and_returned(sandbox):
    result = sandbox.run("cypher('MATCH (g:gene {id: $id}) RETURN g.name AS name, 3 AS n', {'id': 'NCBIGene:2200'})")
    assert result.ok and result.strings == ["NCBIGene:2200", "FBN1"]  # ids and names; numbers are not strings
