"""``kar``: knowledge-aware query expansion on the scripted server: the entity call, linking, the knowledge the
expansion prompt carries, the expanded query's retrieval, relation-type constraints; unreadable replies recorded."""

from __future__ import annotations

import json

from tests.support.openai_server import text_reply

from .conftest import build, user_text

QUESTION = "Which genes are implicated in Marfan syndrome?"


def expansion(text: str, constraints: list[dict] | None = None):
    return text_reply(json.dumps({"expansion": text, "constraints": constraints or []}))


GENE_OF_MARFAN = [{"entity": "OMIM:154700", "relation": "associated_gene"}]


def test_the_expansion_prompt_carries_the_linked_entities_and_their_most_relevant_facts(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("1. Marfan syndrome"), expansion("connective tissue disorder"))
    output = build("kar", clinical, chat, triples=2).retrieve("Marfan syndrome lens of the eye dislocation", 10)
    assert len(openai_server.requests) == 2
    prompt = user_text(openai_server.requests[1])
    assert "- Marfan syndrome [disease, id OMIM:154700]" in prompt
    assert "(Marfan syndrome, has_phenotype, Ectopia lentis)" in prompt  # its document: lens dislocation
    assert prompt.count("(Marfan syndrome, ") == 2 and "Tall stature" not in prompt  # the `triples` most relevant
    assert output.record.details["linked"] == ["OMIM:154700"] and output.record.details["failures"] == []


def test_relation_type_constraints_put_the_nodes_meeting_them_first(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("Marfan syndrome"), expansion("Marfan syndrome connective tissue", GENE_OF_MARFAN))
    constrained = build("kar", clinical, chat).retrieve(QUESTION, 10)
    openai_server.enqueue(text_reply("Marfan syndrome"), expansion("Marfan syndrome connective tissue", GENE_OF_MARFAN))
    unconstrained = build("kar", clinical, chat, constraints=False).retrieve(QUESTION, 10)
    marfan, fbn1 = clinical.index_of("OMIM:154700"), clinical.index_of("NCBIGene:2200")
    assert unconstrained.indices[0] == marfan and fbn1 in unconstrained.indices[1:]
    assert constrained.indices[0] == fbn1 and constrained.record.details["met"][:2] == [1, 0]
    assert constrained.record.details["constraints"] == GENE_OF_MARFAN


def test_the_expanded_query_is_what_retrieval_runs(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("none"), expansion("spider fingers"))
    output = build("kar", clinical, chat).retrieve("What is this finding called?", 5)
    assert output.indices[0] == clinical.index_of("HP:0001166")  # Arachnodactyly: only the expansion names it
    assert output.record.details["failures"] == ["entities: the reply named none; linked the whole question"]


def test_unreadable_replies_and_unknown_constraints_are_recorded_fallbacks(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("Marfan syndrome"),
                          expansion("fibrillin", [{"entity": "OMIM:154700", "relation": "treats"},
                                                  {"entity": "F8", "relation": "associated_gene"}, "gene"]))
    output = build("kar", clinical, chat).retrieve(QUESTION, 5)
    failures = output.record.details["failures"]
    assert len(failures) == 3 and all(f.startswith("constraint ") and "entities are OMIM:154700" in f
                                      for f in failures)
    assert f"relations are {', '.join(clinical.relation_types)}" in failures[0]  # the valid choices named
    assert output.record.details["constraints"] == [] and output.indices  # retrieval went on
    openai_server.enqueue(text_reply("Marfan syndrome"), text_reply("FBN1 fibrillin gene, no JSON here"))
    output = build("kar", clinical, chat).retrieve(QUESTION, 5)
    assert output.record.details["failures"][0].startswith("expansion: no JSON object")
    assert output.record.details["expansion"] == "FBN1 fibrillin gene, no JSON here"
    assert output.indices[0] == clinical.index_of("NCBIGene:2200")


def test_ark_eval_retrieves_the_right_node(eval_run, openai_server):
    openai_server.enqueue(text_reply("Marfan syndrome"), expansion("the gene of Marfan syndrome", GENE_OF_MARFAN))
    _, summary, rows = eval_run("kar", [{"id": "a", "query": QUESTION, "answer_ids": ["NCBIGene:2200"]}])
    assert summary["overall"]["hit@1"] == 1.0 and rows["a"]["hit@1"] == 1.0
