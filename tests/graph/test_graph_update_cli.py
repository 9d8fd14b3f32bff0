"""``ark graph update``/``compact``/``info``/``verify`` as a user runs them, bad update files, an interrupted
update, and runs that record the graph version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ark.cli.eval_cmd import register as register_eval
from ark.cli.graph_cmd import register as register_graph
from ark.graph import load_graph
from ark.graph.versioning import read_manifest
from ark.index import open_index
from tests.support.cli import cli_invoker
from tests.support.graphs import save_clinical_graph, write_folder

cli = cli_invoker(register_graph, register_eval)


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    return save_clinical_graph(tmp_path / "clinical")


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_update_adds_changes_and_deletes_then_compacts(graph: Path, tmp_path: Path) -> None:
    nodes = write(tmp_path / "nodes.csv", 'id,name,type,properties\nX:1,Glimmer syndrome,syndrome,"{""description"": '
                  '""a new disorder with lens dislocation""}"\nHP:0001166,Spider fingers,phenotype,\n')
    edges = write(tmp_path / "edges.jsonl", json.dumps({"from": "X:1", "to": "HP:0001166", "type": "shows"}) + "\n")
    delete = write(tmp_path / "delete.txt", "# gone\nHP:0000478\nOMIM:154700\tNCBIGene:2200\tassociated_gene\n")
    result = cli("graph", "update", graph, "--nodes", nodes, "--edges", edges, "--delete", delete, "--note", "r2")
    assert result.exit_code == 0, result.output
    assert "version 1" in result.text and "2 nodes new or changed, 1 deleted, 1 edges added, 1 removed" in result.text
    updated = load_graph(graph)
    assert updated.metadata["graph_version"] == 1 and not updated.has_node("HP:0000478")
    assert "syndrome" in updated.node_types and "shows" in updated.relation_types
    assert updated.name(updated.index_of("HP:0001166")) == "Spider fingers"
    hits = open_index(updated, "bm25", progress=False).search("Glimmer syndrome", 1)
    assert updated.node_id(hits[0][0]) == "X:1"
    info = cli("graph", "info", graph)
    assert "Version 1" in info.text and "r2" in info.text
    assert cli("graph", "verify", graph).exit_code == 0
    compacted = cli("graph", "compact", graph)
    assert compacted.exit_code == 0 and "version 1 compacted" in compacted.text
    assert read_manifest(graph).base_path == "bases/000001"
    again = load_graph(graph)
    assert again.metadata["fingerprint"] == updated.metadata["fingerprint"]
    assert cli("graph", "compact", graph).exit_code == 2  # nothing to compact


@pytest.mark.parametrize(("files", "message"), [
    ({"delete.txt": "NOPE:1\n"}, "cannot delete unknown node id(s): 1 row(s): 'NOPE:1'"),
    ({"delete.txt": "a\tb\n"}, "line 1: expected a node id or from<TAB>to<TAB>type"),
    ({"delete.txt": "HP:0000478\tHP:0000118\tnot_a_relation\n"}, "cannot delete edge(s) the graph does not have"),
    ({"edges.csv": "from,to,type\nX:9,HP:0000118,is_a\n"}, "edge(s) to or from unknown node ids: 1 row(s): "
                                                           "'X:9 -[is_a]-> HP:0000118'"),
    ({"nodes.csv": "id,name,type\nX:1,a,t\nX:1,b,t\n"}, "node id(s) given more than once: 'X:1'"),
    ({"nodes.csv": "id,name,type\nHP:0000478,a,t\n", "delete.txt": "HP:0000478\n"}, "both deleted and given"),
    ({"nodes.txt": "x"}, "unknown table format '.txt'"),
])
def test_bad_updates_are_refused_naming_the_value_and_change_nothing(graph: Path, tmp_path: Path, files: dict,
                                                                      message: str) -> None:
    options = {".txt": "--delete", ".csv": None, ".jsonl": None}
    args = []
    for name, text in files.items():
        path = write(tmp_path / name, text)
        flag = "--nodes" if name.startswith("nodes") else "--edges" if name.startswith("edges") else options[".txt"]
        args += [flag, path]
    result = cli("graph", "update", graph, *args)
    assert result.exit_code == 2 and message in result.text, result.text
    assert read_manifest(graph) is None or read_manifest(graph).current == 0
    assert not (graph / "deltas").exists() or not any((graph / "deltas").iterdir())


def test_update_from_a_new_export_stores_the_difference(tmp_path: Path) -> None:
    old = write_folder(tmp_path / "old", "csv")
    graph = tmp_path / "graph"
    assert cli("graph", "import", "parquet", old, "--out", graph).exit_code == 0
    before = load_graph(graph)
    first = before.node_id(0)
    nodes = [(before.node_id(i), before.name(i) + (" renamed" if i == 0 else ""), before.node_type(i))
             for i in range(1, before.num_nodes)] + [("NEW:1", "Novel node", "gene")]
    new = write_folder(tmp_path / "new", "csv", nodes=[{"id": i, "name": n, "type": t} for i, n, t in nodes],
                       edges=[{"from": "NEW:1", "to": before.node_id(1), "type": "causes"}])
    result = cli("graph", "update", graph, "--from", new)
    assert result.exit_code == 0, result.output
    after = load_graph(graph)
    assert not after.has_node(first) and after.has_node("NEW:1") and after.num_edges == 1


def test_a_killed_update_leaves_the_old_version(graph: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest is swapped last: an update that dies after writing its delta folder leaves version 0, and the
    next update replaces the orphan folder."""
    import ark.graph.versioning.versions as versions

    def die(*args, **kwargs):
        raise KeyboardInterrupt

    nodes = write(tmp_path / "nodes.csv", "id,name,type\nX:1,Something,thing\n")
    monkeypatch.setattr(versions, "atomic_write_text", die)
    with pytest.raises(KeyboardInterrupt):
        versions.update_graph(graph, __import__("ark.loaders.updates", fromlist=["x"]).read_update(nodes))
    monkeypatch.undo()
    assert (graph / "deltas" / "000001").is_dir()
    reopened = load_graph(graph)
    assert not reopened.has_node("X:1") and reopened.metadata.get("graph_version") is None
    assert cli("graph", "update", graph, "--nodes", nodes).exit_code == 0
    assert load_graph(graph).has_node("X:1")


def test_a_run_records_the_graph_version_and_is_not_resumed_on_another(graph: Path, tmp_path: Path) -> None:
    queries = write(tmp_path / "q.jsonl", json.dumps({"id": "a", "query": "Marfan syndrome",
                                                      "answer_ids": ["OMIM:154700"]}) + "\n")
    run = tmp_path / "run"
    nodes = write(tmp_path / "nodes.csv", "id,name,type\nX:1,Something,thing\n")
    assert cli("graph", "update", graph, "--nodes", nodes).exit_code == 0
    assert cli("eval", graph, "-m", "bm25", "-q", queries, "--run-dir", run, "--no-progress").exit_code == 0
    assert json.loads((run / "config.json").read_text())["graph_version"] == 1
    more = write(tmp_path / "more.csv", "id,name,type\nX:2,Other,thing\n")
    assert cli("graph", "update", graph, "--nodes", more).exit_code == 0
    result = cli("eval", graph, "-m", "bm25", "-q", queries, "--run-dir", run, "--no-progress")
    assert result.exit_code == 2 and "was run on version 1" in result.text and "now at version 2" in result.text
    assert "--allow-new-version" in result.text
