"""``graph.info``: a graph's identity read as a typed record, the same on a built, a saved and an updated graph."""

from __future__ import annotations

from ark.graph import EdgeTable, GraphInfo, KnowledgeGraph, NodeTable, build_graph, load_graph, save_graph
from ark.graph.versioning import update_graph
from ark.loaders.updates import read_update


def _graph(metadata: dict) -> KnowledgeGraph:
    nodes = NodeTable(["a", "b"], ["person", "film"], ["Ada", "Brazil"], ["Ada, a director", "Brazil, a film"])
    return build_graph(nodes, EdgeTable(["a"], ["b"], ["directed"]), metadata=metadata)


def test_a_built_graph_says_its_name_credit_and_descriptions():
    graph = _graph({"name": "films", "credit": "Example data", "type_descriptions": {"person": "people"}})
    info = graph.info
    assert (info.name, info.label(), info.credit) == ("films", "films", "Example data")
    assert info.type_descriptions == {"person": "people"} and info.relation_descriptions == {}
    assert (info.stored_version, info.version) == (None, 0)


def test_an_unnamed_graph_shows_the_default_label():
    info = _graph({}).info
    assert info.name is None and info.label() == "graph" and info.label("the graph") == "the graph"
    assert GraphInfo.from_metadata({"graph_version": "3"}).version == 3


def test_a_saved_then_updated_graph_reports_its_new_version_and_fingerprint(tmp_path):
    folder = tmp_path / "films"
    save_graph(_graph({"name": "films"}), folder)
    before = load_graph(folder).info
    assert before.name == "films" and before.fingerprint and before.version == 0
    nodes = tmp_path / "nodes.jsonl"
    nodes.write_text('{"id": "c", "type": "film", "name": "Heat", "text": "Heat, a film"}\n')
    update_graph(folder, read_update(nodes=nodes))
    after = load_graph(folder).info
    assert after.version == 1 and after.fingerprint != before.fingerprint and after.name == "films"


def test_the_version_manifest_reads_typed_and_writes_back_the_same_file(tmp_path):
    from ark.graph.versioning import MANIFEST, compact_graph, read_manifest

    folder = tmp_path / "films"
    save_graph(_graph({"name": "films"}), folder)
    for k, name in enumerate(("Heat", "Ran")):
        nodes = tmp_path / f"nodes{k}.jsonl"
        nodes.write_text(f'{{"id": "n{k}", "type": "film", "name": "{name}", "text": "{name}, a film"}}\n')
        update_graph(folder, read_update(nodes=nodes), note=f"add {name}")
    compact_graph(folder)
    manifest = read_manifest(folder)
    assert (manifest.current, manifest.base_version, manifest.base_path) == (2, 2, "bases/000002")
    assert [(h.version, h.kind) for h in manifest.history] == [(0, "base"), (1, "delta"), (2, "delta"),
                                                                (2, "compaction")]
    assert manifest.update_of(1).note == "add Heat" and manifest.cypher_folder(2) == "cypher/versions/000002"
    assert manifest.versions_since_import() == [1, 2] and manifest.entry(2).kind == "compaction"
    assert manifest.dumps() == (folder / MANIFEST).read_text()  # the on-disk form, unchanged by the records
