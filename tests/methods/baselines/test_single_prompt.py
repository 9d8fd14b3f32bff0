"""``base-llm``, ``text-rag`` and ``graph-rag``: one chat call each, carrying nothing (the question alone), the
retrieved chunks, or the core entities' subgraph; the answer is the reply's ``Answer:`` line."""

from __future__ import annotations

import pytest

from tests.support.embeddings_server import EmbeddingsServer
from tests.support.openai_server import text_reply

from .conftest import build, user_text

MARFAN_GENES = "Which genes are implicated in Marfan syndrome?"


def test_base_llm_sends_the_question_alone_and_reads_the_answer_line(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("FBN1 encodes fibrillin.\nAnswer: FBN1"))
    output = build("base-llm", clinical, chat).retrieve(MARFAN_GENES, 10)
    (request,) = openai_server.requests
    assert "tools" not in request and request["messages"][-1]["content"] == f"Question: {MARFAN_GENES}"
    assert "Marfan syndrome [disease" not in user_text(request)  # no graph evidence at all
    assert output.answer.text == "FBN1" and output.indices == [] and output.record.details["failures"] == []


def test_a_reply_without_an_answer_line_is_a_recorded_failure_not_a_crash(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("I am not sure."), text_reply(""))
    method = build("base-llm", clinical, chat)
    for _ in range(2):
        output = method.retrieve(MARFAN_GENES, 10)
        assert output.answer.text == "" and "no `Answer:` line" in output.record.details["failures"][-1]


def test_text_rag_puts_the_top_chunks_by_dense_similarity_in_the_prompt(openai_server, chat, clinical):
    with EmbeddingsServer() as embeddings:
        openai_server.enqueue(text_reply("Answer: Hemophilia A"))
        method = build("text-rag", clinical, chat, embedder="openai:test-embedder",
                       embedder_base_url=embeddings.base_url, top_k=2)
        output = method.retrieve("prolonged bleeding after a minor injury or surgery", 10)
    prompt = user_text(openai_server.requests[0])
    assert prompt.count("Passage ") == 2 and "Hemophilia A [disease, id OMIM:306700]" in prompt
    assert "(Hemophilia A, associated_gene, F8)" in prompt  # the chunk carries the node's edges
    assert output.record.details["retrieved"][0] == "OMIM:306700"
    assert output.indices[0] == clinical.index_of("OMIM:306700")
    assert len(openai_server.requests) == 1


def test_graph_rag_linearises_the_two_hop_subgraph_of_the_core_entities(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("Dravet syndrome has SCN1A.\nAnswer: SCN1A"))
    output = build("graph-rag", clinical, chat, entities=1).retrieve("genes of diseases with febrile seizure", 10)
    prompt = user_text(openai_server.requests[0])
    assert "Core entities:\nFebrile seizure [phenotype, id HP:0002373]" in prompt
    assert "(Dravet syndrome, has_phenotype, Febrile seizure)" in prompt  # hop 1
    assert "(Dravet syndrome, associated_gene, SCN1A)" in prompt  # hop 2
    assert output.answer.text == "SCN1A" and output.indices[0] == clinical.index_of("NCBIGene:6323")
    assert output.record.details["core_entities"] == ["HP:0002373"]


@pytest.mark.parametrize(("name", "reply", "sets"), [
    ("base-llm", "Answer: FBN1", ()),
    ("graph-rag", "Answer: FBN1", ()),
    ("text-rag", "**Answer:** FBN1", ("index=bm25",)),
])
def test_ark_eval_scores_a_right_answer(name, reply, sets, eval_run, openai_server):
    openai_server.enqueue(text_reply(reply))
    _, summary, rows = eval_run(name, [{"id": "a", "query": MARFAN_GENES, "answer": "FBN1",
                                        "answer_ids": ["NCBIGene:2200"]}], *sets)
    assert rows["a"]["answer_metrics"]["exact_match"] == 1.0 and summary["answers"]["exact_match"] == 1.0


def test_a_malformed_reply_in_an_eval_run_is_recorded_in_the_run_not_a_crash(eval_run, openai_server, tmp_path):
    from ark.runtime.trajectory_file import read_trajectory_file

    openai_server.enqueue(text_reply("FBN1, I believe."))
    result, summary, rows = eval_run("base-llm", [{"id": "a", "query": MARFAN_GENES, "answer": "FBN1"}])
    assert rows["a"]["answer_metrics"]["exact_match"] == 0.0 and rows["a"]["predicted_answer"] == ""
    (record,) = read_trajectory_file(tmp_path / "run-base-llm" / "trajectories.jsonl")
    assert record["failures"] == ["no `Answer:` line in the final reply; recorded an empty answer"]
    assert record["calls"][0]["reply"] == "FBN1, I believe." and record["usage"]["total_tokens"] > 0
