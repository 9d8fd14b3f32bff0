"""``mor``: the offline planner's planning graph, ``ark train mor`` (seeded, resumable, model folder checked against
the graph), ``ark eval --method mor`` offline and with a chat model's plan on the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.openai_server import text_reply

pytest.importorskip("torch")

TWO_HOP = "Which genes are linked to diseases that present with Febrile seizure?"


def questions(graph) -> list[dict]:
    """Questions with their exact answers from the clinical graph's edges: a disease's genes and phenotypes, a
    phenotype's diseases, and the genes of a phenotype's diseases."""
    rows = []
    for node in range(graph.num_nodes):
        name, kind = graph.name(node), graph.node_type(node)
        found = graph.neighbors(node)
        linked = {t: [graph.node_id(int(n)) for n in found.nodes if graph.node_type(int(n)) == t]
                  for t in graph.node_types}
        if kind == "disease":
            rows.append({"query": f"Which genes are implicated in {name}?", "answer_ids": linked["gene"]})
            rows.append({"query": f"Which phenotypes are features of {name}?", "answer_ids": linked["phenotype"]})
        elif kind == "phenotype" and linked["disease"]:
            rows.append({"query": f"Which diseases present with {name}?", "answer_ids": linked["disease"]})
            genes = {graph.node_id(int(g)) for d in linked["disease"] for g in graph.neighbors(graph.index_of(d)).nodes
                     if graph.node_type(int(g)) == "gene"}
            rows.append({"query": f"Which genes are linked to diseases that present with {name}?",
                         "answer_ids": sorted(genes)})
    return [{"id": f"q{i}", **row} for i, row in enumerate(rows) if row["answer_ids"]]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def split(clinical, tmp_path_factory):
    rows = [r for r in questions(clinical) if r["query"] != TWO_HOP]
    folder = tmp_path_factory.mktemp("mor-quiz")
    return write(folder / "train.jsonl", rows[0::2]), write(folder / "val.jsonl", rows[1::2])


@pytest.fixture
def train_cli():
    from ark.cli.train_cmd import register
    from tests.support.cli import cli_invoker

    return cli_invoker(register)


@pytest.fixture
def trained(train_cli, clinical_dir, split, tmp_path, no_llm):
    def train(name: str = "model", *sets: str, seed: int = 0):
        out = tmp_path / name
        options = [part for value in ("epochs=4", "batch_size=8", "negatives=5", "width=16", *sets)
                   for part in ("--set", value)]
        result = train_cli("train", "mor", clinical_dir, "-q", split[0], "--val", split[1], "--out", out,
                           "--seed", str(seed), "--no-progress", *options)
        return result, out

    return train


def test_the_offline_plan_follows_the_types_the_question_names(clinical):
    from ark.index.embedders import open_node_index
    from ark.methods.mor.planner import OfflinePlanner

    planner = OfflinePlanner(clinical, open_node_index(clinical, "bm25", names_only=True))
    plan = planner.plan(TWO_HOP)
    assert plan.targets == ["gene"] and [clinical.name(a) for a in plan.anchors] == ["Febrile seizure"]
    first = plan.routes[0]  # "Seizure" is inside the longer name, so it is no anchor
    assert (first.rank, first.types) == (0, ("phenotype", "disease", "gene"))
    assert first.relations == (("has_phenotype",), ("associated_gene",))
    assert len({r.signature for r in plan.routes}) == len(plan.routes)  # a route the schema also allows: once


def test_training_writes_a_checked_model_and_the_same_seed_gives_the_same_model(trained):
    result, out = trained()
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "mor.json").read_text())
    assert meta["graph"]["name"] == "clinical" and meta["epochs"] == 4 and meta["parameters"] > 0
    assert "best epoch" in result.text and "parameters" in result.text and not (out / "training").exists()
    again, other = trained("again"), trained("other", seed=1)
    assert (again[1] / "weights.pt").read_bytes() == (out / "weights.pt").read_bytes()
    assert (other[1] / "weights.pt").read_bytes() != (out / "weights.pt").read_bytes()
    refused = trained()
    assert refused[0].exit_code == 2 and "already holds a trained MoR model" in refused[0].text


def test_an_interrupted_training_resumes_to_the_same_model(trained, clinical, split, tmp_path, monkeypatch):
    from ark.methods.mor import training

    _, whole = trained("whole")
    original = training.fit

    def stop_after_two(*args, **kwargs):
        args = list(args)
        report = args[7]

        def interrupting(epoch, loss, mrr):
            report(epoch, loss, mrr)
            if epoch == 2:
                raise KeyboardInterrupt

        args[7] = interrupting
        return original(*args, **kwargs)

    monkeypatch.setattr(training, "fit", stop_after_two)
    result, out = trained("resumed")
    assert result.exit_code != 0 and (out / "training" / "checkpoint.pt").is_file() and not (out / "mor.json").exists()
    monkeypatch.setattr(training, "fit", original)
    result, out = trained("resumed")
    assert result.exit_code == 0 and "resuming after epoch 2" in result.text
    assert (out / "weights.pt").read_bytes() == (whole / "weights.pt").read_bytes()
    history = [json.loads((folder / "mor.json").read_text())["history"] for folder in (out, whole)]
    assert history[0] == history[1] and len(history[0]) == 4  # epochs 3 and 4 as if never interrupted


def test_ark_eval_offline_retrieves_the_held_out_answer(trained, eval_run):
    _, out = trained()
    _, summary, rows = eval_run("mor", [{"id": "t", "query": TWO_HOP, "answer_ids": ["NCBIGene:6323"]}],
                                f"model={out}", "planner=offline")
    assert summary["overall"]["hit@1"] > 0 and rows["t"]["hit@1"] == 1.0


def test_a_chat_models_plan_is_used_and_a_bad_one_falls_back(trained, eval_run, openai_server, chat, clinical):
    _, out = trained()
    plan = {"metapaths": [["phenotype", "has_phenotype", "disease", "associated_gene", "gene"]],
            "restrictions": {"phenotype": ["Febrile seizure"]}}
    openai_server.enqueue(text_reply(json.dumps(plan)), text_reply("no plan here"))
    question = {"id": "t", "query": TWO_HOP, "answer_ids": ["NCBIGene:6323"]}
    _, summary, _ = eval_run("mor", [question], f"model={out}")
    assert summary["overall"]["hit@1"] == 1.0
    assert "phenotype" in openai_server.requests[0]["messages"][0]["content"]
    from ark.methods import MethodContext, build_method

    method = build_method("mor", clinical, {"model": str(out)}, MethodContext(llm=chat))
    output = method.retrieve(TWO_HOP, 5)
    details = output.record.details
    assert details["planner"] == "offline" and details["failures"][0].startswith("planner: no JSON")
    assert output.indices[0] == clinical.index_of("NCBIGene:6323")


def test_a_model_for_another_graph_or_none_is_one_line(trained, clinical, tmp_path):
    from ark.methods import MethodError, build_method

    _, out = trained()
    meta = json.loads((out / "mor.json").read_text())
    meta["graph"]["fingerprint"] = "another"
    (out / "mor.json").write_text(json.dumps(meta))
    with pytest.raises(MethodError, match="made for graph 'clinical'.*not this graph"):
        build_method("mor", clinical, {"model": str(out)})
    with pytest.raises(MethodError, match="ark train mor clinical"):
        build_method("mor", clinical, {"model": str(tmp_path / "nothing")})


def test_ark_methods_lists_it_with_its_paper_and_docs_page():
    from ark.methods import method_specs

    spec = method_specs()["mor"]
    page = Path(__file__).parents[3] / spec.docs
    assert spec.paper.startswith("Lei et al., Mixture of Structural-and-Textual Retrieval") and page.is_file()
    assert "**Algorithm" in page.read_text() and "**Budgets.**" in page.read_text()
