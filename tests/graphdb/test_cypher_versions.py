"""The Cypher database of a graph that changes: one database per version, the previous version's copied and the
update applied where the tables stay the same, equal to an export of a graph rebuilt from scratch (by node id); a
reader's database is never written; compaction removes superseded databases; ``verify`` checks the version's."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from ark.graph import KnowledgeGraph, load_graph, save_graph
from ark.graph.versioning import compact_graph, read_manifest, update_graph
from ark.graph.versioning.delta import GraphDelta
from ark.storage.checksums import DamagedFileError, digest_file
from tests.graph.update_model import ContentModel, random_delta
from tests.support.graphs import build_clinical_graph, build_conditions_graph, build_drug_graph

pytest.importorskip("ladybug")

from ark.graphdb.export import ladybug_database, write_database  # noqa: E402
from ark.graphdb.ladybug_engine import LadybugEngine  # noqa: E402
from ark.graphdb.versioned import verify_databases  # noqa: E402

FIXTURES = (build_clinical_graph, build_conditions_graph, build_drug_graph)
QUERIES = (  # (query, whether it returns nodes whose idx must name the same node id)
    "MATCH (n) RETURN label(n) AS t, n.id AS id, n.name AS name, n.text AS text",
    "MATCH (a)-[r]->(b) RETURN label(r) AS rel, a.id AS a, b.id AS b",
    "MATCH (n) RETURN label(n) AS t, count(*) AS c",
    "MATCH (a)-[r]->(b) RETURN label(r) AS rel, label(a) AS s, label(b) AS d, count(*) AS c",
    "MATCH (a)-[]-(b) RETURN a.id AS a, count(DISTINCT b) AS degree",
    "MATCH (a)-[]->()-[]->(c) RETURN a.id AS a, c.id AS c, count(*) AS paths",
)


def shape_keeping_delta(model: ContentModel, rng: random.Random, step: int) -> GraphDelta:
    """A random update that keeps the database's tables: changed texts and names, new nodes of existing types,
    edges like existing ones (same relation and endpoint types), edges removed, a node deleted now and then."""
    linked = {x for e in model.edges for x in e[:2]}
    deleted = [x for x in model.nodes if x not in linked][:1]  # a node without edges: its type keeps others
    ids = [x for x in model.nodes if x not in deleted]
    by_type: dict[str, list[str]] = {}
    for node_id in ids:
        by_type.setdefault(model.nodes[node_id]["type"], []).append(node_id)
    rows = []
    for node_id in rng.sample(ids, k=min(3, len(ids))):
        row = dict(model.nodes[node_id])
        row["name"], row["text"] = f"{row['name']} v{step}", f"{row['text']} changed in step {step}"
        rows.append(row)
    template = dict(model.nodes[rng.choice(ids)])
    rows.append({**template, "id": f"new:{step}", "name": f"new node {step}", "text": f"added in step {step}"})
    edges = sorted(model.edges)
    added: set[tuple[str, str, str]] = set()
    for source, target, relation in rng.sample(edges, k=min(3, len(edges))):
        s_type, t_type = model.nodes[source]["type"], model.nodes[target]["type"]
        added.add((rng.choice(by_type[s_type]), rng.choice(by_type[t_type]), relation))
    like = [e for e in edges if model.nodes[e[0]]["type"] == template["type"]]
    if like:  # the new node gets an edge like one its type has
        _source, target, relation = rng.choice(like)
        added.add((f"new:{step}", rng.choice(by_type[model.nodes[target]["type"]]), relation))
    removed = [e for e in rng.sample(edges, k=min(2, len(edges))) if e not in added]
    # an added edge may be one the graph has (a no-op): the database must not hold it twice
    nodes = pa.Table.from_pylist(rows, schema=pa.schema([(c, pa.string()) for c in
                                                        ("id", "type", "name", "text", "properties")]))

    def table(keys: Any) -> pa.Table:
        keys = sorted(keys)
        return pa.table({"source": pa.array([k[0] for k in keys], pa.string()),
                         "target": pa.array([k[1] for k in keys], pa.string()),
                         "relation": pa.array([k[2] for k in keys], pa.string())})

    return GraphDelta(nodes, table(added), table(removed), pa.array(deleted, pa.string()))


def answers(engine: LadybugEngine, graph: KnowledgeGraph) -> list[list[tuple]]:
    """Every query's rows, sorted; and each node's ``idx`` checked to name that node in ``graph``."""
    out = [sorted(tuple(json.dumps(v, sort_keys=True) for v in row) for row in engine.query(q).rows)
           for q in QUERIES]
    for node_id, idx in engine.query("MATCH (n) RETURN n.id, n.idx").rows:
        assert graph.node_id(idx) == node_id, (node_id, idx)
    properties = engine.query("MATCH (n) RETURN n").rows
    out.append(sorted(json.dumps({k: v for k, v in row[0].items() if k != "idx"}, sort_keys=True)
                      for row in properties))
    return out


def made(database: Any) -> str:
    return json.loads((database.path.parent / "manifest.json").read_text())["made"]


def run_sequence(folder: Path, seed: int, draw: Any, steps: int = 4) -> tuple[list[str], list[str]]:
    """Updates (and a compaction now and then); after each, the version's database against an export of the graph
    rebuilt from the model. Returns (differences, how each database was made)."""
    rng = random.Random(seed)
    graph = FIXTURES[seed % len(FIXTURES)]()
    save_graph(graph, folder)
    graph = load_graph(folder)
    ladybug_database(graph)
    model = ContentModel(graph)
    problems, how = [], []
    for step in range(1, steps + 1):
        delta = draw(model, rng, step)
        graph = update_graph(folder, delta, current=graph)
        model.apply(delta)
        if rng.random() < 0.25:
            compact_graph(folder)
            graph = load_graph(folder)
        database = ladybug_database(graph)
        how.append(made(database))
        rebuilt = model.rebuild()
        file = folder.parent / f"rebuilt-{seed}-{step}" / "graph.lbug"
        file.parent.mkdir()
        write_database(rebuilt, file)
        with LadybugEngine(database.path) as mine, LadybugEngine(file) as theirs:
            if answers(mine, graph) != answers(theirs, rebuilt):
                problems.append(f"seed {seed} step {step}: the version's database differs from a rebuild's")
    return problems, how


@pytest.mark.parametrize("seed", range(3))
def test_databases_following_updates_equal_a_rebuilds(tmp_path: Path, seed: int) -> None:
    problems, how = run_sequence(tmp_path / "graph", seed, shape_keeping_delta)
    assert problems == []
    assert how.count("update") >= 2, how  # the tables stayed the same: the previous version's copied and updated


@pytest.mark.parametrize("seed", range(3))
def test_databases_of_any_update_equal_a_rebuilds(tmp_path: Path, seed: int) -> None:
    problems, how = run_sequence(tmp_path / "graph", seed, random_delta)
    assert problems == []
    assert "update" in how, how  # new node types, relations, pairs and columns are added to the copy


def test_a_readers_database_is_never_written_and_compaction_removes_superseded_ones(tmp_path: Path) -> None:
    folder = tmp_path / "graph"
    save_graph(build_clinical_graph(), folder)
    graph = load_graph(folder)
    first = ladybug_database(graph)
    before = digest_file(first.path)
    reader = LadybugEngine(first.path)
    count = reader.query("MATCH (n) RETURN count(n)").rows
    model, rng = ContentModel(graph), random.Random(3)
    versions = []
    for step in range(1, 4):
        delta = shape_keeping_delta(model, rng, step)
        graph = update_graph(folder, delta, current=graph)
        model.apply(delta)
        versions.append(ladybug_database(graph))
    assert made(versions[0]) == "update"  # later ones may be exported again (the copy grows: GROWTH_LIMIT)
    assert digest_file(first.path) == before  # copied, never opened for writing
    assert reader.query("MATCH (n) RETURN count(n)").rows == count
    assert reader.query("MATCH (n {id: 'new:1'}) RETURN n.id").rows == []
    reader.close()
    manifest = read_manifest(folder)
    assert [h.cypher for h in manifest.history if h.is_update] == [
        f"cypher/versions/{v:06d}" for v in (1, 2, 3)]
    assert [v.path.parent.parent.name for v in versions] == ["000001", "000002", "000003"]
    assert verify_databases(folder) == [(versions[-1].path.parent, 1)]

    compact_graph(folder)
    assert not first.path.exists() and not versions[0].path.exists() and not versions[1].path.exists()
    assert versions[2].path.exists()  # the new base's version keeps its database
    after = ladybug_database(load_graph(folder))
    assert after.path == versions[2].path
    assert verify_databases(folder) == [(versions[2].path.parent, 1)]


def test_verify_finds_a_damaged_database_or_one_of_another_version(tmp_path: Path) -> None:
    folder = tmp_path / "graph"
    save_graph(build_drug_graph(), folder)
    graph = load_graph(folder)
    ladybug_database(graph)
    model = ContentModel(graph)
    graph = update_graph(folder, shape_keeping_delta(model, random.Random(1), 1), current=graph)
    database = ladybug_database(graph)
    manifest_file = database.path.parent / "manifest.json"
    meta = json.loads(manifest_file.read_text())
    manifest_file.write_text(json.dumps({**meta, "fingerprint": "other"}))
    with pytest.raises(DamagedFileError, match="another graph version"):
        verify_databases(folder)
    manifest_file.write_text(json.dumps(meta))
    with database.path.open("r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xff" * 16)
    with pytest.raises(DamagedFileError):
        verify_databases(folder)



def test_graph_update_makes_the_new_versions_database_and_verify_checks_it(tmp_path: Path) -> None:
    from ark.cli.graph_cmd import register
    from tests.support.cli import cli_invoker
    from tests.support.graphs import save_clinical_graph

    cli = cli_invoker(register)
    folder = save_clinical_graph(tmp_path / "clinical")
    graph = load_graph(folder)
    ladybug_database(graph)  # a user of GraphScout had the database made
    node = graph.node_id(0)
    (tmp_path / "nodes.csv").write_text(f"id,name,type\n{node},Renamed node,{graph.node_type(0)}\n")
    result = cli("graph", "update", folder, "--nodes", tmp_path / "nodes.csv")
    assert result.exit_code == 0, result.output
    assert "Cypher database of version 1: cypher/versions/000001/ladybug-" in result.text
    database = ladybug_database(load_graph(folder))
    assert made(database) == "update"
    with LadybugEngine(database.path) as engine:
        assert engine.query("MATCH (n {id: $id}) RETURN n.name", {"id": node}).rows == [["Renamed node"]]
    checked = cli("graph", "verify", folder)
    assert checked.exit_code == 0 and "cypher/versions/000001/ladybug-" in checked.text, checked.output
    database.path.write_bytes(database.path.read_bytes()[:-4096])
    assert cli("graph", "verify", folder).exit_code == 1


def test_a_database_that_outgrew_its_export_is_exported_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    import ark.graphdb.versioned as versioned

    folder = tmp_path / "graph"
    save_graph(build_clinical_graph(), folder)
    graph = load_graph(folder)
    ladybug_database(graph)
    model, rng, how = ContentModel(graph), random.Random(5), []
    for step, limit in enumerate((1e9, 1e9, 0.5, 1e9), start=1):
        monkeypatch.setattr(versioned, "GROWTH_LIMIT", limit)
        delta = shape_keeping_delta(model, rng, step)
        graph = update_graph(folder, delta, current=graph)
        model.apply(delta)
        database = ladybug_database(graph)
        how.append((made(database), json.loads((database.path.parent / "manifest.json").read_text())
                    ["exported_bytes"]))
    assert [h[0] for h in how] == ["update", "update", "export", "update"]
    assert how[0][1] == how[1][1] != how[2][1] == how[3][1]  # the size of the export each descends from


def test_an_added_edge_the_graph_already_has_stays_one_edge_in_the_database(tmp_path: Path) -> None:
    folder = tmp_path / "graph"
    save_graph(build_clinical_graph(), folder)
    graph = load_graph(folder)
    ladybug_database(graph)
    src, dst, rel = graph.edges()
    had = (graph.node_id(int(src[0])), graph.node_id(int(dst[0])), graph.relation_types[int(rel[0])])
    fresh = next((graph.node_id(int(s)), graph.node_id(int(d)), graph.relation_types[int(r)])
                 for s, d, r in zip(src[::-1], dst, rel, strict=False)
                 if (graph.node_id(int(s)), graph.node_id(int(d)), graph.relation_types[int(r)]) != had)
    edges = pa.table({c: pa.array([had[k], fresh[k]], pa.string()) for k, c in
                      enumerate(("source", "target", "relation"))})
    empty = pa.table({c: pa.array([], pa.string()) for c in ("source", "target", "relation")})
    nodes = pa.table({c: pa.array([], pa.string()) for c in ("id", "type", "name", "text", "properties")})
    updated = update_graph(folder, GraphDelta(nodes, edges, empty, pa.array([], pa.string())), current=graph)
    database = ladybug_database(updated)
    assert made(database) == "update"
    exported = tmp_path / "export" / "graph.lbug"
    exported.parent.mkdir()
    write_database(updated, exported)
    with LadybugEngine(database.path) as mine, LadybugEngine(exported) as theirs:
        assert answers(mine, updated) == answers(theirs, updated)
