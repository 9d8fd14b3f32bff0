"""The read-only guard: statements that write, read files, load extensions, attach databases or change settings are
refused however they are quoted, commented or cased (each one also as an observation from model-written code);
every query the scripted GraphScout solver writes for a generated quiz is accepted and runs."""

from __future__ import annotations

import pytest

from ark.graphdb import CypherError, WriteRefused, check_read_only
from ark.graphdb.guard import parameter_names, strip_literals
from ark.sandbox import CodeSandbox, SandboxLimits, bwrap_problem
from tests.support.graphs import build_clinical_graph, build_drug_graph

ADVERSARIAL = [
    # settings and procedures, plain, backticked, cased, spaced
    "CALL timeout=0", "CALL `timeout`=0", "cAlL `TIMEOUT` = 0", "CALL `project_graph`('g', ['gene'], ['x'])",
    "CALL `show_official_extensions`() RETURN *", "CALL show_loaded_extensions() RETURN *",
    "CALL clear_warnings() RETURN *", "CALL current_setting('timeout') RETURN *",
    "WITH 1 AS x CALL `table_info`('gene') RETURN * UNION CALL `drop_projected_graph`('g') RETURN *",
    # file-reading table functions and LOAD / COPY
    "CALL `READ_CSV_SERIAL`('/etc/passwd') RETURN *", "CALL read_csv_parallel('/etc/passwd') RETURN *",
    "RETURN `read_parquet`('x.parquet')", "MATCH (n) RETURN READ_NPY('x.npy')",
    "LOAD FROM '/etc/passwd' (file_format='csv') RETURN *", "MATCH (n) WITH n LOAD FROM 'x.csv' RETURN *",
    "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "COPY gene FROM '/tmp/n.csv'",
    "COPY (MATCH (n) RETURN n.id) TO '/tmp/o.csv'", "EXPORT DATABASE '/tmp/x'", "IMPORT DATABASE '/tmp/x'",
    # extensions, other databases, transactions
    "INSTALL httpfs", "LOAD EXTENSION httpfs", "ATTACH '/tmp/other' AS o (dbtype lbug)", "DETACH o", "USE o",
    "BEGIN TRANSACTION", "COMMIT", "ROLLBACK", "CHECKPOINT", "SHOW DATABASES",
    # writes
    "MATCH (n:gene) SET n.name = 'x'", "match (n) detach delete n", "MATCH (n) DELETE n", "MERGE (n:gene {id: 'y'})",
    "MATCH (n:gene) REMOVE n.name", "DROP TABLE gene", "ALTER TABLE gene ADD x INT64", "CREATE MACRO m(x) AS x",
    "MATCH (n) FOREACH (x IN [1] | SET n.y = x)", "RETURN nextval('seq')",
    "MATCH (n) CALL { WITH n SET n.x = 1 } IN TRANSACTIONS RETURN n",
    # hidden behind comments, strings, quoting and statement separators
    "/* RETURN */ CREATE (n:gene)", "MATCH (n) RETURN n // \n CREATE (x:gene)", "MATCH (n) RETURN n /* */ ; "
    "CREATE (m:gene {id:'x'})", "MATCH (n) RETURN 1 AS `x` CREATE (y:gene)", "MATCH (n) WHERE n.name = 'a\\\\' "
    "CREATE (x:gene) RETURN n", "CALL db.labels() YIELD label CREATE (n:x)", "CALL `db`.`labels`() YIELD label "
    "INSERT (n:x)", "CALL show_tables() RETURN * ;; ", "MATCH (n) RETURN apoc.coll.sum([1])",
    "CALL apoc.load.json('http://x') YIELD value RETURN value", "RETURN 'unterminated", "RETURN `unterminated",
    "MATCH (n) RETURN n /* unterminated",
]
ACCEPTED = [
    "MATCH (n) WHERE n.name = 'CREATE TABLE x' RETURN n.name // SET in a comment",
    "MATCH (n:disease) RETURN n.set AS `delete`, $merge", "CALL show_tables() RETURN *",
    "call SHOW_TABLES() return *", "CALL table_info('gene') RETURN *", "UNWIND range(1, 10) AS x RETURN sum(x)",
    "MATCH (n) WHERE n.name = 'a\\' CREATE (x:gene) //' RETURN n",  # one string: CREATE is inside it
    "MATCH p = (a)-[*1..2]-(b) RETURN length(p), nodes(p) LIMIT 3",
    "MATCH (n) RETURN CASE WHEN n.idx > 1 THEN 'a' ELSE 'b' END AS c, [x IN [1,2] WHERE x > 1 | x * 2] AS l",
    "MATCH (n:gene|disease) RETURN labels(n)", "OPTIONAL MATCH (n) RETURN toLower(n.name), size(collect(n));",
]


def test_at_least_thirty_adversarial_statements():
    assert len(ADVERSARIAL) >= 30 and len(set(ADVERSARIAL)) == len(ADVERSARIAL)


@pytest.mark.parametrize("query", ADVERSARIAL)
def test_adversarial_statements_are_refused(query):
    with pytest.raises(CypherError) as error:
        check_read_only(query)
    assert error.value.kind in ("write_refused", "syntax")
    assert isinstance(error.value, WriteRefused) or "never closed" in str(error.value) or "one statement" in \
        str(error.value)


@pytest.mark.parametrize("query", ACCEPTED)
def test_reading_statements_pass(query):
    check_read_only(query)


def test_literals_and_parameters_are_read_like_the_engine():
    assert parameter_names("MATCH (n {id: $id}) WHERE n.name = '$not' RETURN $`other`, $id") == ["id", "other"]
    assert strip_literals("RETURN 'a' AS `b` // c").strip() == "RETURN     AS"


@pytest.fixture(scope="module")
def engine():
    pytest.importorskip("ladybug")
    from ark.graphdb.ladybug_engine import open_ladybug

    engine = open_ladybug(build_clinical_graph())
    yield engine
    engine.close()


def test_every_statement_is_refused_as_an_observation_by_the_sandbox(engine):
    isolation = "bwrap" if bwrap_problem() is None else "rlimit"
    code = ("kinds = []\nfor query in QUERIES:\n    try:\n        cypher(query)\n        kinds.append('ran')\n"
            "    except CypherError as error:\n        kinds.append(error.kind)\nprint(sorted(set(kinds)))")
    with pytest.warns(RuntimeWarning) if isolation == "rlimit" else _nothing(), \
            CodeSandbox(engine, SandboxLimits(timeout_s=20), isolation=isolation) as sandbox:
        result = sandbox.run(f"QUERIES = {ADVERSARIAL!r}\n{code}")
    assert result.ok and result.stdout.strip() == "['syntax', 'write_refused']", result.observation()
    assert engine.query("MATCH (g:gene) RETURN count(g) AS n").rows == [[7]]  # nothing changed


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("build", [build_clinical_graph, build_drug_graph])
def test_every_query_the_scripted_solver_writes_for_a_quiz_is_accepted(build):
    pytest.importorskip("ladybug")
    from ark.graphdb.ladybug_engine import open_ladybug
    from ark.methods.graphscout.cypher_writer import CypherWriter
    from ark.quiz import QuizConfig, generate_quiz

    graph = build()
    questions = [q["query"] for q in generate_quiz(graph, QuizConfig(n=150, seed=3)).questions]
    with open_ladybug(graph) as engine:
        writer = CypherWriter(graph, engine.schema)
        plans = [plan for plan in map(writer.plan, questions) if plan is not None]
        assert len(plans) >= len(questions) // 2, (len(plans), len(questions))
        for plan in plans:
            check_read_only(plan.cypher)
            engine.query(plan.cypher, plan.params, limit=10_000)  # and the engine runs it


@pytest.mark.slow
def test_every_query_the_scripted_solver_writes_for_the_hpo_quiz_is_accepted(use_hpo_home):
    pytest.importorskip("ladybug")
    from ark.graphdb import open_cypher
    from ark.loaders import open_graph
    from ark.methods.graphscout.cypher_writer import CypherWriter
    from ark.quiz import QuizConfig, generate_quiz

    graph = open_graph("hpo")
    questions = [q["query"] for q in generate_quiz(graph, QuizConfig(n=300, seed=0)).questions]
    engine = open_cypher(graph)
    try:
        writer = CypherWriter(graph, engine.schema)
        plans = [plan for plan in map(writer.plan, questions) if plan is not None]
        assert len(plans) >= len(questions) // 2
        for plan in plans:
            check_read_only(plan.cypher)
    finally:
        engine.close()
