"""``graph-counselor``: the planner's need goes to the executor, the executor's graph functions fill the memory the
planner reads next, a draft answer goes to the reflection agent, whose feedback starts a new round."""

from __future__ import annotations

from tests.support.openai_server import text_reply

from .conftest import build, user_text

QUESTION = "Which genes are implicated in Marfan syndrome?"


def test_plan_execute_reflect_revise_accept(openai_server, chat, clinical):
    openai_server.enqueue(
        text_reply("Need: the genes of Marfan syndrome"),
        text_reply("Action: RetrieveNode[Marfan syndrome]\nAction: NeighbourCheck[OMIM:154700, associated_gene]\n"
                   "and then I will think"),
        text_reply("The disease is linked to a gene.\nAnswer: TGFBR1"),
        text_reply("Verdict: revise\nFeedback: the evidence names FBN1, not TGFBR1"),
        text_reply("Answer: FBN1"),
        text_reply("Verdict: accept"),
    )
    output = build("graph-counselor", clinical, chat).retrieve(QUESTION, 10)
    requests = [user_text(r) for r in openai_server.requests]
    assert len(requests) == 6  # accept ends the run
    assert "Information needed: the genes of Marfan syndrome" in requests[1]  # planner -> executor
    assert "RetrieveNode[keywords]" in openai_server.requests[1]["messages"][0]["content"]
    assert "NCBIGene:2200 (FBN1)" in requests[2] and "The best match is node OMIM:154700" in requests[2]
    assert "Draft answer: TGFBR1" in requests[3] and "NCBIGene:2200 (FBN1)" in requests[3]  # evidence reviewed
    assert "Feedback on your previous answer: the evidence names FBN1, not TGFBR1" in requests[4]
    assert "NCBIGene:2200 (FBN1)" in requests[4]  # the memory is kept across rounds
    assert output.answer.text == "FBN1" and output.indices[0] == clinical.index_of("NCBIGene:2200")
    assert [r["draft"] for r in output.record.details["rounds"]] == ["TGFBR1", "FBN1"]
    assert output.record.details["failures"] == []


def test_the_step_budget_ends_a_round_without_a_draft(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("Need: something"), text_reply("I would rather not call anything."))
    output = build("graph-counselor", clinical, chat, max_steps=1).retrieve(QUESTION, 10)
    assert len(openai_server.requests) == 2 and output.answer.text == ""
    assert output.record.details["memory"] == ["[something] no graph function was called"]
    assert output.record.details["failures"] == ["round 0: no draft answer within max_steps=1"]


def test_an_unreadable_verdict_keeps_the_draft_and_is_recorded(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("Answer: FBN1"), text_reply("Looks fine to me."))
    output = build("graph-counselor", clinical, chat).retrieve(QUESTION, 10)
    assert len(openai_server.requests) == 2 and output.answer.text == "FBN1"
    assert output.record.details["failures"] == ["reflect 0: no readable verdict; the draft answer stands"]


def test_without_reflections_the_first_draft_is_the_answer(openai_server, chat, clinical):
    openai_server.enqueue(text_reply("Answer: FBN1"))
    output = build("graph-counselor", clinical, chat, max_reflections=0).retrieve(QUESTION, 10)
    assert len(openai_server.requests) == 1 and output.answer.text == "FBN1"


def test_ark_eval_scores_a_right_answer(eval_run, openai_server):
    openai_server.enqueue(text_reply("Answer: FBN1"), text_reply("Verdict: accept"))
    _, summary, rows = eval_run("graph-counselor", [{"id": "a", "query": QUESTION, "answer": "FBN1"}])
    assert rows["a"]["answer_metrics"]["exact_match"] == 1.0 and summary["answers"]["exact_match"] == 1.0
