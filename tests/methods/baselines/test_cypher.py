"""``cypher``: node retrieval, one model-written query run read-only on the graph database, its rows (or its error)
in the second and last call."""

from __future__ import annotations

import pytest

from tests.support.openai_server import text_reply

from .conftest import build, user_text

pytest.importorskip("ladybug")

QUESTION = "Which genes are implicated in Marfan syndrome?"
GOOD = ("```cypher\nMATCH (d:disease)-[:associated_gene]->(g:gene) WHERE d.id = 'OMIM:154700' "
        "RETURN g.name AS gene, g.id AS id\n```")


@pytest.fixture
def method(chat, clinical):
    made = build("cypher", clinical, chat)
    yield made
    if made.engine is not None:
        made.engine.close()


def test_candidates_and_schema_go_in_then_the_rows_come_back(openai_server, method, clinical):
    openai_server.enqueue(text_reply(GOOD), text_reply("Answer: FBN1"))
    output = method.retrieve(QUESTION, 10)
    first, second = openai_server.requests
    assert "- Marfan syndrome [disease, id OMIM:154700]" in user_text(first)  # the node retrieval step
    assert "(disease)-[:associated_gene]->(gene)" in first["messages"][0]["content"]  # the schema
    assert '{"gene": "FBN1", "id": "NCBIGene:2200"}' in user_text(second)  # the query's rows
    assert "WHERE d.id = 'OMIM:154700'" in user_text(second)
    assert output.answer.text == "FBN1" and output.indices[0] == clinical.index_of("NCBIGene:2200")
    assert output.record.details["failures"] == [] and output.record.details["cypher"].startswith("MATCH")


@pytest.mark.parametrize(("reply", "carried", "failure"), [
    ("```cypher\nCREATE (n:gene {id: 'x'})\n```", "The query failed", "the query failed"),
    ("```cypher\nMATCH (d:disease RETURN d\n```", "The query failed", "the query failed"),
    ("I would look at the genes of the disease.", "No query was written.", "the model wrote no Cypher query"),
])
def test_a_bad_or_missing_query_is_reported_to_the_model_and_recorded(reply, carried, failure, openai_server,
                                                                       method):
    openai_server.enqueue(text_reply(reply), text_reply("Answer: unknown"))
    output = method.retrieve(QUESTION, 10)
    assert len(openai_server.requests) == 2 and carried in user_text(openai_server.requests[1])
    assert output.record.details["failures"][0].startswith(failure) and output.answer.text == "unknown"


def test_ark_eval_scores_a_right_answer(eval_run, openai_server):
    openai_server.enqueue(text_reply(GOOD), text_reply("Answer: FBN1"))
    _, summary, rows = eval_run("cypher", [{"id": "a", "query": QUESTION, "answer": "FBN1"}])
    assert rows["a"]["answer_metrics"]["exact_match"] == 1.0 and summary["answers"]["exact_match"] == 1.0


def test_the_query_is_read_from_a_cypher_block_else_any_block_else_a_bare_query():
    from ark.methods.cypher_qa.method import query_text

    assert query_text("```sql\nMATCH (a) RETURN a\n```\n```cypher\nMATCH (b) RETURN b\n```") == "MATCH (b) RETURN b"
    assert query_text("Here:\n```sql\nMATCH (a) RETURN a\n```") == "MATCH (a) RETURN a"
    assert query_text("MATCH (a) RETURN a.name") == "MATCH (a) RETURN a.name"
    assert query_text("I cannot write a query.") is None
