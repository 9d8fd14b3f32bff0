"""The Neo4j engine without a server: the session/transaction calls it makes, row streaming, value conversion and
error mapping, through a double of the driver's session API that returns the driver's own Record/Node types and
raises the driver's own exceptions; plus engine selection from settings and the import statements."""

from __future__ import annotations

import pytest

from ark.graphdb import (
    CypherParameterError,
    CypherQueryError,
    CypherSyntaxError,
    CypherTimeout,
    CypherUnavailable,
    TooManyRows,
    WriteRefused,
    build_schema,
    open_cypher,
    resolve_graphdb_settings,
)
from tests.support.graphs import build_drug_graph

neo4j = pytest.importorskip("neo4j")

from neo4j.exceptions import Neo4jError, ServiceUnavailable  # noqa: E402
from neo4j.graph import Graph, Node, Relationship  # noqa: E402

from ark.graphdb.neo4j_engine import Neo4jEngine, neo4j_import_statements  # noqa: E402


class FakeResult:
    """Streams records lazily and counts how many the client pulled."""

    def __init__(self, keys, rows):
        self._keys, self._rows, self.pulled = keys, rows, 0

    def keys(self):
        return self._keys

    def __iter__(self):
        for row in self._rows:
            self.pulled += 1
            yield neo4j.Record(zip(self._keys, row, strict=True))


class FakeDriver:
    """The part of ``neo4j.Driver`` the engine uses: ``session(**options)`` -> ``execute_read(work)`` -> ``tx.run``."""

    def __init__(self, keys=(), rows=(), error=None):
        self.keys, self.rows, self.error = list(keys), list(rows), error
        self.sessions, self.runs, self.work_functions, self.results, self.closed = [], [], [], [], False

    def session(self, **options):
        self.sessions.append(options)
        return FakeSession(self)

    def close(self):
        self.closed = True


class FakeSession:
    def __init__(self, driver):
        self.driver = driver

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute_read(self, work):
        self.driver.work_functions.append(work)
        return work(FakeTransaction(self.driver))


class FakeTransaction:
    def __init__(self, driver):
        self.driver = driver

    def run(self, query, parameters=None):
        self.driver.runs.append((query, parameters))
        if self.driver.error is not None:
            raise self.driver.error
        result = FakeResult(self.driver.keys, self.driver.rows)
        self.driver.results.append(result)
        return result


def server_error(code: str, message: str) -> Neo4jError:
    return Neo4jError._hydrate_neo4j(code=code, message=message)


def test_query_runs_in_a_read_transaction_with_timeout_and_parameters():
    driver = FakeDriver(["name"], [["FBN1"]])
    engine = Neo4jEngine(driver=driver, database="hpo", timeout_s=7)
    result = engine.query("MATCH (d:disease {name: $name})-[:associated_gene]->(g) RETURN g.name AS name",
                          {"name": "Marfan syndrome"}, timeout_s=3.5)
    assert result.columns == ["name"] and result.rows == [["FBN1"]]
    assert driver.sessions == [{"default_access_mode": neo4j.READ_ACCESS, "database": "hpo"}]
    assert driver.runs == [("MATCH (d:disease {name: $name})-[:associated_gene]->(g) RETURN g.name AS name",
                            {"name": "Marfan syndrome"})]
    assert driver.work_functions[0].timeout == 3.5  # neo4j.unit_of_work: a server-side transaction timeout
    engine.query("RETURN 1")
    assert driver.work_functions[1].timeout == 7
    engine.close()
    assert driver.closed


def test_rows_are_streamed_and_cut_at_the_limit():
    driver = FakeDriver(["x"], [[i] for i in range(10_000)])
    engine = Neo4jEngine(driver=driver, max_rows=50)
    result = engine.query("UNWIND range(1, 10000) AS x RETURN x", limit=20)
    assert len(result.rows) == 20 and result.truncated
    assert driver.results[-1].pulled == 21  # the rest of the stream is never fetched
    with pytest.raises(TooManyRows, match="more than 50 rows"):
        engine.query("UNWIND range(1, 10000) AS x RETURN x")
    assert driver.results[-1].pulled == 51


def test_writes_are_refused_before_reaching_the_server():
    driver = FakeDriver()
    engine = Neo4jEngine(driver=driver)
    for query in ("CREATE (n:gene {id: 'x'})", "MATCH (n) DETACH DELETE n", "LOAD CSV FROM 'file:///x' AS l RETURN l",
                  "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DELETE n', {})",
                  "MATCH (n) CALL { WITH n RETURN n.id AS i } IN TRANSACTIONS RETURN i"):
        with pytest.raises(WriteRefused):
            engine.query(query)
    assert driver.runs == []


def test_nodes_relationships_and_paths_become_plain_values():
    graph = Graph()
    gene = Node(graph, "4:x:1", 1, ["gene"], {"id": "NCBIGene:2200", "name": "FBN1", "idx": 25})
    disease = Node(graph, "4:x:2", 2, ["disease"], {"id": "OMIM:154700", "name": "Marfan syndrome", "idx": 20})
    rel_class = graph.relationship_type("associated_gene")
    edge = rel_class(graph, "5:x:1", 1, {})
    edge._start_node, edge._end_node = disease, gene
    driver = FakeDriver(["g", "r", "names"], [[gene, edge, ["a", "b"]]])
    result = Neo4jEngine(driver=driver).query("MATCH (d)-[r]->(g) RETURN g, r, ['a', 'b'] AS names")
    assert result.rows == [[{"_label": "gene", "id": "NCBIGene:2200", "name": "FBN1", "idx": 25},
                            {"_type": "associated_gene"}, ["a", "b"]]]
    assert result.node_indices == [25]
    assert isinstance(edge, Relationship)


@pytest.mark.parametrize(("error", "expected", "text"), [
    (server_error("Neo.ClientError.Statement.SyntaxError", "Invalid input 'RETRUN' (line 1, column 10)"),
     CypherSyntaxError, "RETRUN"),
    (server_error("Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration", "timed out"),
     CypherTimeout, "time limit"),
    (server_error("Neo.ClientError.Statement.AccessMode", "Writing in read access mode not allowed."),
     WriteRefused, "read-only"),
    (server_error("Neo.ClientError.Statement.ParameterMissing", "Expected parameter(s): name"),
     CypherParameterError, "name"),
    (server_error("Neo.ClientError.Statement.SemanticError", "Variable `m` not defined"), CypherQueryError, "`m`"),
    (ServiceUnavailable("Couldn't connect to localhost:7687"), CypherUnavailable, "7687"),
])
def test_driver_errors_become_short_cypher_errors(error, expected, text):
    engine = Neo4jEngine(driver=FakeDriver(error=error), url="bolt://localhost:7687")
    with pytest.raises(expected, match=text):
        engine.query("MATCH (n) RETURN n")


def test_a_real_driver_is_built_from_the_url_and_fails_cleanly_without_a_server():
    engine = Neo4jEngine("bolt://127.0.0.1:1", user="neo4j", password="secret", timeout_s=1)
    with pytest.raises(CypherUnavailable, match="127.0.0.1:1"):
        engine.query("RETURN 1")
    engine.close()
    with pytest.raises(CypherUnavailable, match="ARK_NEO4J_URL"):
        Neo4jEngine(None)


def test_settings_pick_the_engine(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[graphdb]\nengine = "neo4j"\nurl = "bolt://db:7687"\nuser = "neo4j"\n')
    settings = resolve_graphdb_settings(config_path=config, environ={"ARK_NEO4J_PASSWORD": "pw"})
    assert (settings.engine, settings.url, settings.user, settings.password) == ("neo4j", "bolt://db:7687",
                                                                                 "neo4j", "pw")
    assert "pw" not in repr(settings)
    assert resolve_graphdb_settings(config_path=config, environ={"ARK_GRAPHDB": "ladybug"}).engine == "ladybug"
    with pytest.raises(ValueError, match="valid: ladybug, neo4j"):
        resolve_graphdb_settings(config_path=tmp_path / "none.toml", environ={"ARK_GRAPHDB": "mysql"})
    config.write_text('[graphdb]\nhost = "x"\n')
    with pytest.raises(ValueError, match="unknown \\[graphdb\\] key"):
        resolve_graphdb_settings(config_path=config, environ={})
    engine = open_cypher(build_drug_graph(), resolve_graphdb_settings(
        config_path=tmp_path / "none.toml", environ={"ARK_GRAPHDB": "neo4j", "ARK_NEO4J_URL": "bolt://127.0.0.1:1"}))
    assert isinstance(engine, Neo4jEngine) and engine.schema.node_label("gene/protein") == "gene_protein"
    engine.close()


def test_import_statements_load_the_same_labels_as_the_embedded_export():
    graph = build_drug_graph()
    schema = build_schema(graph)
    statements = list(neo4j_import_statements(graph, batch_size=2))
    constraints = [s for s, _ in statements if s.startswith("CREATE CONSTRAINT")]
    assert len(constraints) == len(schema.nodes)
    node_rows = [row for s, p in statements if "CREATE (n:" in s for row in p["rows"]]
    assert sorted(r["id"] for r in node_rows) == sorted(graph.node_id(i) for i in range(graph.num_nodes))
    assert all(r["idx"] == graph.index_of(r["id"]) for r in node_rows)
    edges = [(s, row) for s, p in statements if "MATCH (a:" in s for row in p["rows"]]
    assert len(edges) == graph.num_edges
    assert any("(a:`gene_protein`" in s and "[:`interacts`]" in s for s, _ in edges)
    assert max(len(p.get("rows", [])) for _, p in statements) <= 2


def _whole_graph_statements(graph, batch_size):
    """The statements as the whole-graph formulation gives them (every property dict and every edge at once): the
    oracle the streamed statements must equal."""
    from ark.graphdb.export import node_properties_by_type
    from ark.graphdb.schema import convert_property

    properties = node_properties_by_type(graph)
    schema = build_schema(graph, properties)
    out = [(f"CREATE CONSTRAINT IF NOT EXISTS FOR (n:`{s.label}`) REQUIRE n.id IS UNIQUE", {}) for s in schema.nodes]
    for spec in schema.nodes:
        members = graph.nodes_of_type(spec.node_type).tolist()
        props = properties.get(spec.node_type) or [{}] * len(members)
        rows = [{"id": graph.node_id(i), "name": graph.name(i), "text": graph.text(i), "idx": i,
                 **{c.name: convert_property(p.get(c.key), c.type) for c in spec.properties}}
                for i, p in zip(members, props, strict=True)]
        out += [(f"UNWIND $rows AS row CREATE (n:`{spec.label}`) SET n = row", {"rows": rows[k:k + batch_size]})
                for k in range(0, len(rows), batch_size)]
    src, dst, rel = (a.tolist() for a in graph.edges())
    codes = graph.node_type_codes
    for spec in schema.rels:
        for pair in spec.pairs:
            wanted = (graph.relation_types.index(spec.relation), schema.node_table(pair.source).node_type,
                      schema.node_table(pair.target).node_type)
            rows = [{"source": graph.node_id(a), "target": graph.node_id(b)}
                    for a, b, r in zip(src, dst, rel, strict=True)
                    if (r, graph.node_types[codes[a]], graph.node_types[codes[b]]) == wanted]
            statement = (f"UNWIND $rows AS row MATCH (a:`{pair.source}` {{id: row.source}}), "
                         f"(b:`{pair.target}` {{id: row.target}}) CREATE (a)-[:`{spec.label}`]->(b)")
            out += [(statement, {"rows": rows[k:k + batch_size]}) for k in range(0, len(rows), batch_size)]
    return out


@pytest.mark.parametrize("build", ["build_clinical_graph", "build_conditions_graph", "build_drug_graph"])
@pytest.mark.parametrize(("batch_size", "scan_rows"), [(2, 3), (3, 1), (5000, None)])
def test_streamed_import_statements_equal_the_whole_graph_ones(tmp_path, build, batch_size, scan_rows):
    from ark.graph import load_graph, save_graph
    from tests.support import graphs

    save_graph(getattr(graphs, build)(), tmp_path / "graph")
    graph = load_graph(tmp_path / "graph")  # memory-mapped, as a large graph is read
    streamed = list(neo4j_import_statements(graph, batch_size=batch_size, scan_rows=scan_rows))
    assert streamed == _whole_graph_statements(graph, batch_size)
    assert any(len(p.get("rows", [])) for s, p in streamed if "MATCH (a:" in s)


def test_import_statements_never_hold_every_edge_or_property_dict(tmp_path, monkeypatch):
    import ark.graphdb.export
    from ark.graph import KnowledgeGraph, load_graph, save_graph

    save_graph(build_drug_graph(), tmp_path / "graph")
    graph = load_graph(tmp_path / "graph")

    def whole(*_args, **_kwargs):
        raise AssertionError("the whole graph's edges or property dicts were built")

    monkeypatch.setattr(KnowledgeGraph, "edges", whole)
    monkeypatch.setattr(ark.graphdb.export, "node_properties_by_type", whole)
    statements = list(neo4j_import_statements(graph, batch_size=2, scan_rows=2))
    assert sum(len(p["rows"]) for s, p in statements if "MATCH (a:" in s) == graph.num_edges
