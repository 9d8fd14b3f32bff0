"""``polyg``: the classification call names the pattern, the traversal of that pattern gathers the facts the
answer call carries; empty traversals widen, unreadable classifications are recorded."""

from __future__ import annotations

import json

import pytest

from tests.support.openai_server import text_reply

from .conftest import build, user_text


def classify(pattern: str, head: str, relations: list[str], tail: str | None = None):
    return text_reply(json.dumps({"pattern": pattern, "head": head, "relations": relations, "tail": tail}))


def run(openai_server, chat, clinical, classification, question="q?"):
    openai_server.enqueue(classification, text_reply("Answer: x"))
    output = build("polyg", clinical, chat).retrieve(question, 50)
    assert len(openai_server.requests) == 2  # classify, answer: always two calls
    return output, user_text(openai_server.requests[1])


def test_the_classification_prompt_lists_the_patterns_and_relations(openai_server, chat, clinical):
    run(openai_server, chat, clinical, classify("h__", "Marfan syndrome", []))
    system = openai_server.requests[0]["messages"][0]["content"]
    assert all(p in system for p in ("⟨h,_,_⟩", "⟨h,r,_⟩", "⟨h,*,t⟩", "⟨h,r,t⟩", "disease -associated_gene-> gene"))


def test_a_relation_chain_follows_each_relation_in_turn(openai_server, chat, clinical):
    output, facts = run(openai_server, chat, clinical,
                        classify("hr_", "febrile seizure", ["has_phenotype", "associated_gene"]))
    assert "Febrile seizure [phenotype, id HP:0002373]" in facts
    assert "(Dravet syndrome, has_phenotype, Febrile seizure)" in facts
    assert "(Dravet syndrome, associated_gene, SCN1A)" in facts
    assert "Seizure)" not in facts  # only the named relations are followed
    assert output.record.details["pattern"]["pattern"] == "hr_" and output.record.details["facts"] == 2


def test_a_connection_question_gets_the_shortest_paths(openai_server, chat, clinical):
    _, facts = run(openai_server, chat, clinical, classify("h*t", "Marfan syndrome", [], "Loeys-Dietz syndrome"))
    for shared in ("Aortic root dilatation", "Arachnodactyly", "Joint hypermobility"):
        assert f"(Marfan syndrome, has_phenotype, {shared})" in facts
        assert f"(Loeys-Dietz syndrome, has_phenotype, {shared})" in facts
    assert "FBN1" not in facts  # not on a shortest path


@pytest.mark.parametrize(("classification", "note"), [
    (classify("hrt", "Marfan syndrome", ["associated_gene"], "F8"), "no edge joins head and tail"),
    (classify("hr_", "Marfan syndrome", ["treats"]), "unknown relation"),
])
def test_an_empty_traversal_widens_to_the_neighbourhood(classification, note, openai_server, chat, clinical):
    output, facts = run(openai_server, chat, clinical, classification)
    assert any(n.startswith(note) for n in output.record.details["adaptations"])
    assert "(Marfan syndrome, associated_gene, FBN1)" in facts  # the head's neighbourhood


def test_an_unreadable_classification_is_recorded_and_the_question_grounded(openai_server, chat, clinical):
    output, facts = run(openai_server, chat, clinical, text_reply("It asks about {genes"),
                        question="Marfan syndrome genes")
    assert output.record.details["failures"][0].startswith("the classification could not be read")
    assert "(Marfan syndrome, associated_gene, FBN1)" in facts


def test_ark_eval_scores_a_right_answer(eval_run, openai_server):
    openai_server.enqueue(classify("hr_", "Marfan syndrome", ["associated_gene"]), text_reply("Answer: FBN1"))
    _, summary, rows = eval_run("polyg", [{"id": "a", "query": "Which genes are implicated in Marfan syndrome?",
                                           "answer": "FBN1"}])
    assert rows["a"]["answer_metrics"]["exact_match"] == 1.0 and summary["answers"]["exact_match"] == 1.0
