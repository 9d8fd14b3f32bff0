"""The graph as an embedded Cypher database (ladybug): export, cache, read-only guard, errors, schema text."""

from __future__ import annotations

import json
import os

import pytest

from ark.graph import EdgeTable, NodeTable, build_graph, save_graph
from ark.graphdb import (
    CypherParameterError,
    CypherQueryError,
    CypherSyntaxError,
    CypherTimeout,
    TooManyRows,
    WriteRefused,
    build_schema,
    check_read_only,
    cypher_identifier,
)
from tests.support.graphs import build_clinical_graph, build_drug_graph

pytest.importorskip("ladybug")

from ark.graphdb.export import ladybug_database  # noqa: E402
from ark.graphdb.ladybug_engine import LadybugEngine, open_ladybug  # noqa: E402


@pytest.fixture(scope="module")
def drug_engine(tmp_path_factory):
    graph = build_drug_graph()
    save_graph(graph, tmp_path_factory.mktemp("drugs") / "graph")
    engine = open_ladybug(graph)
    yield graph, engine
    engine.close()


@pytest.fixture(scope="module")
def clinical_engine():
    graph = build_clinical_graph()
    engine = open_ladybug(graph)
    yield graph, engine
    engine.close()


# ------------------------------------------------------------------------------------------------ export
def test_every_node_and_edge_arrives_and_idx_maps_back(clinical_engine):
    graph, engine = clinical_engine
    for node_type, count in graph.type_counts().items():
        label = engine.schema.node_label(node_type)
        assert engine.query(f"MATCH (n:{label}) RETURN count(n) AS n").rows == [[count]]
    rows = engine.query("MATCH (n) RETURN n.id, n.idx, n.name, n.text").rows
    assert len(rows) == graph.num_nodes
    for node_id, idx, name, text in rows:
        assert graph.index_of(node_id) == idx and graph.name(idx) == name and graph.text(idx) == text
    for triple in graph.schema:
        source, target = engine.schema.node_label(triple.source_type), engine.schema.node_label(triple.target_type)
        found = engine.query(f"MATCH (:{source})-[r:{engine.schema.rel_label(triple.relation)}]->(:{target}) "
                             "RETURN count(r)").rows[0][0]
        assert found == triple.count
    # every stored edge, compared as a set with the graph's own arrays
    src, dst, rel = graph.edges()
    expected = {(graph.node_id(a), graph.relation_types[r], graph.node_id(b))
                for a, b, r in zip(src, dst, rel, strict=True)}
    rows = engine.query("MATCH (a)-[r]->(b) RETURN a.id, label(r), b.id", limit=10_000).rows
    assert {tuple(row) for row in rows} == expected


def test_awkward_names_properties_and_multi_pair_relations(drug_engine):
    graph, engine = drug_engine
    schema = engine.schema
    assert schema.node_label("gene/protein") == "gene_protein"
    assert schema.node_label("order") == "order_"  # a reserved word gets a suffix
    assert schema.rel_label("belongs to") == "belongs_to"
    interacts = schema.rel_table("interacts")
    assert {(p.source, p.target) for p in interacts.pairs} == {("drug", "drug"), ("gene_protein", "gene_protein")}
    assert engine.query("MATCH ()-[r:interacts]->() RETURN count(r)").rows == [[2]]
    drug = schema.node_table("drug")
    types = {p.key: p.type for p in drug.properties}
    assert types == {"weight": "DOUBLE", "approved_year": "INT64", "otc": "BOOLEAN", "synonyms": "STRING[]",
                     "vendor": "STRING"}
    row = engine.query("MATCH (d:drug {id: 'DB1'}) RETURN d.weight, d.approved_year, d.otc, d.synonyms, d.vendor"
                       ).rows[0]
    assert row[:4] == [180.16, 1899, True, ["acetylsalicylic acid", "ASA"]]
    assert json.loads(row[4]) == {"name": "Bayer"}
    gene = engine.query("MATCH (g:gene_protein {name: 'VKORC1'}) RETURN g").rows[0][0]
    assert gene["_label"] == "gene_protein" and gene["chromosome"] == "16" and gene["idx"] == graph.index_of("G2")


def test_identifiers_are_plain_cypher_names():
    assert cypher_identifier("gene/protein") == "gene_protein"
    assert cypher_identifier("3 prime UTR") == "t_3_prime_UTR"
    assert cypher_identifier("MATCH") == "MATCH_"
    assert cypher_identifier("--") == "unnamed"


def test_schema_description_lists_tables_columns_and_endpoints(drug_engine):
    text = drug_engine[1].schema.describe()
    assert "- gene_protein [node type 'gene/protein'] (3 nodes): id STRING, name STRING, text STRING, idx INT64" in text
    assert "(drug)-[:interacts]->(drug) 1 edges; (gene_protein)-[:interacts]->(gene_protein) 1 edges" in text
    assert "belongs_to [relation 'belongs to']" in text


# ------------------------------------------------------------------------------------------------ cache
def test_database_is_cached_beside_the_graph_and_rebuilt_when_the_graph_changes(tmp_path):
    graph = build_clinical_graph()
    save_graph(graph, tmp_path / "g")
    first = ladybug_database(graph)
    assert not first.temporary and first.path.parent.parent == tmp_path / "g" / "cypher"
    manifest = json.loads((first.path.parent / "manifest.json").read_text())
    assert manifest["fingerprint"] == graph.metadata["fingerprint"]
    stamp = first.path.stat().st_mtime_ns
    again = ladybug_database(graph)
    assert again.path == first.path and again.path.stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert again.schema == first.schema

    changed = build_graph(NodeTable(["a", "b"], ["t", "t"], ["A", "B"]), EdgeTable(["a"], ["b"], ["r"]))
    changed.path = tmp_path / "g"  # same folder, different content
    rebuilt = ladybug_database(changed)
    assert rebuilt.path == first.path
    with LadybugEngine(rebuilt.path, rebuilt.schema) as engine:
        assert engine.query("MATCH (n) RETURN count(n)").rows == [[2]]


def test_graph_in_memory_or_in_an_unwritable_folder_uses_a_temporary_database(tmp_path, monkeypatch):
    engine = open_ladybug(build_clinical_graph())  # graph.path is None
    folder = engine.path.parent
    assert folder.is_dir() and engine.query("MATCH (n:gene) RETURN count(n)").rows == [[7]]
    engine.close()
    assert not folder.exists()

    graph = build_clinical_graph()
    save_graph(graph, tmp_path / "ro")
    import ark.graphdb.export as export

    monkeypatch.setattr(export, "_writable", lambda path: False)  # root may write anywhere; pretend it cannot
    built = ladybug_database(graph)
    assert built.temporary and not (tmp_path / "ro" / "cypher").exists()


# ------------------------------------------------------------------------------------------------ read-only
WRITES = [
    "CREATE (n:gene {id: 'x', name: 'X', text: '', idx: 99})",
    "MATCH (n:gene) SET n.name = 'changed'",
    "MATCH (n:gene) DETACH DELETE n",
    "MATCH (n:gene) DELETE n",
    "MERGE (n:gene {id: 'NCBIGene:2200'})",
    "MATCH (n:gene) REMOVE n.name",
    "DROP TABLE gene",
    "ALTER TABLE gene ADD extra STRING",
    "COPY gene FROM '/tmp/nodes.parquet'",
    "COPY (MATCH (n) RETURN n.id) TO '/tmp/ark-export-attempt.csv'",
    "LOAD FROM '/etc/passwd' (file_format='csv') RETURN *",
    "CALL timeout=0",
    "INSTALL httpfs",
    "ATTACH 'other.lbug' AS other (dbtype lbug)",
    "EXPORT DATABASE '/tmp/ark-export-attempt'",
    "match (n:gene) set n.name = 'lower case'",
]


@pytest.mark.parametrize("query", WRITES)
def test_writes_and_file_access_are_refused_and_the_database_is_unchanged(clinical_engine, query):
    _, engine = clinical_engine
    before = engine.query("MATCH (n) RETURN count(n), collect(n.name)").rows
    with pytest.raises(WriteRefused):
        engine.query(query)
    assert engine.query("MATCH (n) RETURN count(n), collect(n.name)").rows == before
    assert not os.path.exists("/tmp/ark-export-attempt.csv")


def test_the_database_itself_is_read_only_even_past_the_guard(clinical_engine):
    _, engine = clinical_engine
    with pytest.raises(RuntimeError, match="read-only"):
        engine._connection().execute("CREATE (n:gene {id: 'x', name: 'X', text: '', idx: 99})")
    assert engine.query("MATCH (n:gene) RETURN count(n)").rows == [[7]]


def test_guard_reads_words_not_text():
    check_read_only("MATCH (n) WHERE n.name = 'CREATE TABLE x' RETURN n.name // SET in a comment")
    check_read_only("MATCH (n:disease) RETURN n.set AS `delete`, $merge")
    check_read_only("CALL show_tables() RETURN *")
    with pytest.raises(WriteRefused, match="CALL apoc.load.json"):
        check_read_only("CALL apoc.load.json('http://x') YIELD value RETURN value", dialect="neo4j")
    check_read_only("CALL db.labels() YIELD label RETURN label", dialect="neo4j")
    with pytest.raises(WriteRefused):
        check_read_only("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", dialect="neo4j")
    with pytest.raises(CypherSyntaxError, match="empty query"):
        check_read_only("   ")


# ------------------------------------------------------------------------------------------------ errors and limits
def test_syntax_error_quotes_the_offending_part(clinical_engine):
    with pytest.raises(CypherSyntaxError) as info:
        clinical_engine[1].query("MATCH (n:gene RETURN n")
    assert "MATCH (n:gene RETURN" in str(info.value) and "offset" in str(info.value)


def test_unknown_table_or_property_lists_what_exists(clinical_engine):
    with pytest.raises(CypherQueryError, match="Node tables: phenotype, disease, gene"):
        clinical_engine[1].query("MATCH (n:protein) RETURN n")
    with pytest.raises(CypherQueryError, match="Node properties: id, idx, name, text"):
        clinical_engine[1].query("MATCH (n:gene) RETURN n.symbol")


def test_parameters_are_passed_checked_and_never_silently_null(clinical_engine):
    engine = clinical_engine[1]
    rows = engine.query("MATCH (d:disease {name: $name})-[:associated_gene]->(g) RETURN g.name",
                        {"name": "Marfan syndrome"}).rows
    assert rows == [["FBN1"]]
    with pytest.raises(CypherParameterError, match=r"\$name"):
        engine.query("MATCH (d:disease {name: $name}) RETURN d")
    with pytest.raises(CypherParameterError, match="type object"):
        engine.query("RETURN $x", {"x": object()})


def test_too_many_rows_without_a_limit_and_truncation_with_one(tmp_path):
    engine = open_ladybug(build_clinical_graph(), max_rows=5)
    try:
        with pytest.raises(TooManyRows, match="more than 5 rows"):
            engine.query("MATCH (n) RETURN n.id")
        result = engine.query("MATCH (n) RETURN n.id ORDER BY n.id", limit=3)
        assert len(result.rows) == 3 and result.truncated
        assert not engine.query("MATCH (n:gene) RETURN n.id", limit=7).truncated
        with pytest.raises(CypherParameterError):
            engine.query("MATCH (n) RETURN n", limit=-1)
    finally:
        engine.close()


def test_one_statement_per_query(clinical_engine):
    with pytest.raises(CypherSyntaxError, match="one statement"):
        clinical_engine[1].query("MATCH (n) RETURN count(n); MATCH (m) RETURN m")
    assert clinical_engine[1].query("RETURN 'a;b' AS s;").rows == [["a;b"]]


def test_timeout(clinical_engine):
    with pytest.raises(CypherTimeout, match="time limit"):
        clinical_engine[1].query("MATCH (a), (b), (c), (d), (f) WHERE a.idx + b.idx + c.idx + d.idx + f.idx = -1 "
                                 "RETURN count(*)", timeout_s=0.05)


def test_results_carry_node_indices_and_records(clinical_engine):
    graph, engine = clinical_engine
    result = engine.query("MATCH (d:disease {name: 'Dravet syndrome'})-[:associated_gene]->(g) RETURN d, g.name AS n")
    assert result.records()[0]["n"] == "SCN1A"
    assert result.node_indices == [graph.index_of("OMIM:607208")]


def test_schema_without_a_database_matches_the_export(clinical_engine):
    graph, engine = clinical_engine
    assert build_schema(graph) == engine.schema


def test_many_distinct_parameterised_queries_do_not_fill_the_buffer_pool():
    # ladybug keeps each distinct parameterised query's prepared statement (and its buffer-pool memory) on the
    # connection; with a 16 MB pool the seventh such query used to fail with "buffer pool is full".
    graph = build_clinical_graph()
    with open_ladybug(graph, buffer_pool_mb=16) as engine:
        for k in range(40):
            rows = engine.query(f"MATCH (d:disease {{id: $d}})-[]-(m) WITH DISTINCT m WHERE NOT m.id IN $skip "
                                f"RETURN count(DISTINCT m) AS n{k}, collect(DISTINCT m.id) AS ids",
                                {"d": "OMIM:154700", "skip": ["HP:0001083"]}).rows
            assert rows[0][0] == 6


def _lexer_disagreements(secret: str, target: str) -> list[str]:
    """Statements whose comments the guard's tokenizer and an engine's lexer could end in different places: a
    ``/* ... **/`` comment (ladybug reads ``**`` as one character of the comment, so it ends at a later ``*/``) and a
    ``//`` comment holding a lone carriage return (Neo4j ends the comment there)."""
    return [
        f"RETURN '' AS c /* **/ + ' */ UNION ALL LOAD FROM \"{secret}\" RETURN * //'",
        f"RETURN 1 /* a ***x**/ + ' */ ; COPY (RETURN 1) TO \"{target}\" //'",
        f"RETURN '' AS c //\r UNION ALL LOAD FROM \"{secret}\" RETURN *",
    ]


def test_comments_the_engine_would_end_elsewhere_are_refused(clinical_engine, tmp_path):
    _, engine = clinical_engine
    secret, target = tmp_path / "secret.csv", tmp_path / "copied.csv"
    secret.write_text("topsecret\n")
    for query in _lexer_disagreements(str(secret), str(target)):
        with pytest.raises((WriteRefused, CypherSyntaxError)):
            engine.query(query)
        for dialect in ("ladybug", "neo4j"):
            with pytest.raises((WriteRefused, CypherSyntaxError)):
                check_read_only(query, dialect)
    assert not target.exists()
    # comments models write stay readable: a star-free block comment, a line comment ending in CR LF
    assert engine.query("MATCH (n:gene) /* genes */ RETURN count(n) // all\r\n").rows == [[7]]
