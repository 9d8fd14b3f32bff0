r"""GraphScout's reward read off hand-made trajectories: the answer wrapper, token F1, touched clue nodes from
structured tool results, every branch of the gated formula, and clear reasons."""

from __future__ import annotations

import pytest

from ark.llm.policy import Usage
from ark.methods.graphscout.reward import (
    GraphScoutReward,
    clue_fraction,
    final_answer,
    graphscout_reward,
    touched_nodes,
)
from ark.runtime.records import StepRecord, ToolCallRecord, Trajectory
from tests.support.graphs import build_clinical_graph

GRAPH = build_clinical_graph()
MARFAN, FBN1, ECTOPIA = (GRAPH.index_of(i) for i in ("OMIM:154700", "NCBIGene:2200", "HP:0001083"))
QUESTION = {"id": "q", "query": "Which gene is associated with Marfan syndrome?", "answer": "FBN1",
            "answer_type": "entity", "clue_ids": ["OMIM:154700", "NCBIGene:2200"]}


def call(name: str, nodes: list[int], ok: bool = True, result: dict | None = None) -> ToolCallRecord:
    return ToolCallRecord.of(f"c-{name}-{len(nodes)}", name, "{}", True, ok, None if ok else "cypher", nodes, result)


def trajectory(final: str | None, *calls: ToolCallRecord, last_calls_tools: bool = False) -> Trajectory:
    """System + user, one assistant turn per call, then the final reply ``final`` (if any)."""
    messages: list[dict] = [{"role": "system", "content": "s"}, {"role": "user", "content": QUESTION["query"]}]
    steps = []
    for k, record in enumerate(calls):
        messages.append({"role": "assistant", "content": None,
                         "tool_calls": [{"id": record.id, "type": "function",
                                         "function": {"name": record.name, "arguments": "{}"}}]})
        messages.append({"role": "tool", "tool_call_id": record.id, "content": "..."})
        steps.append(StepRecord.of(k, [record], ["..."], 0.0, 0.0, Usage()))
    if final is not None:
        message: dict = {"role": "assistant", "content": final}
        if last_calls_tools:
            message["tool_calls"] = [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
        messages.append(message)
    return Trajectory(question=QUESTION["query"], messages=messages, steps=steps,
                      stop_reason="max_steps" if last_calls_tools else "answer")


REWARD = GraphScoutReward(GRAPH)


def test_a_correct_answer_gets_its_f1():
    result = REWARD(trajectory("The gene is FBN1.\n\\answer{FBN1}", call("node_id_retriever", [MARFAN])), QUESTION)
    assert (result.reward, result.case, result.answer_f1, result.clue_fraction) == (1.0, "answer", 1.0, 0.5)


@pytest.mark.parametrize(("final", "why"), [
    ("FBN1", "no \\answer{...} wrapper on its last line"),
    ("\\answer{FBN1}\nI hope that helps.", "no \\answer{...} wrapper on its last line"),
    ("\\answer{ }", "wrapper is empty"),
    (None, "ended on a tool call"),
])
def test_no_wrapper_no_reward_whatever_the_clues(final, why):
    touched_everything = call("cypher", [MARFAN, FBN1])
    result = REWARD(trajectory(final, touched_everything), QUESTION)
    assert (result.reward, result.case) == (0.0, "no_answer")
    assert why in result.reason and result.clue_fraction == 1.0


def test_a_trajectory_that_stopped_on_a_tool_call_has_no_answer():
    result = REWARD(trajectory("\\answer{FBN1}", last_calls_tools=True), QUESTION)
    assert result.reward == 0.0 and "ended on a tool call" in result.reason and "max_steps" in result.reason
    silent = REWARD(trajectory(None), QUESTION)
    assert silent.reward == 0.0 and "has no assistant reply" in silent.reason


def test_a_wrong_answer_earns_clue_credit_up_to_delta():
    wrong = "\\answer{TGFBR1}"
    none_touched = REWARD(trajectory(wrong), QUESTION)
    assert (none_touched.reward, none_touched.case) == (0.0, "clue_bonus")
    half = REWARD(trajectory(wrong, call("node_id_retriever", [MARFAN, ECTOPIA])), QUESTION)
    assert half.reward == pytest.approx(0.4) and half.clue_fraction == 0.5  # min(0 + 0.5, 0.4)
    three = {**QUESTION, "clue_ids": ["OMIM:154700", "NCBIGene:2200", "HP:0001083"]}
    third = REWARD(trajectory(wrong, call("node_id_retriever", [MARFAN])), three)
    assert third.reward == pytest.approx(1 / 3) and third.case == "clue_bonus"


def test_a_partly_right_set_answer_below_delta_adds_clues():
    question = {**QUESTION, "answer": "TGFBR1, TGFBR2, SMAD3, TGFB2, TGFB3", "answer_type": "set"}
    result = REWARD(trajectory("\\answer{TGFBR1}", call("cypher", [MARFAN])), question)
    assert result.answer_f1 == pytest.approx(1 / 3) and result.case == "clue_bonus"
    assert result.reward == pytest.approx(0.4)  # min(1/3 + 1/2, 0.4)


def test_without_the_clue_term():
    result = GraphScoutReward(GRAPH, use_clue=False)(trajectory("\\answer{TGFBR1}", call("cypher", [MARFAN])),
                                                      QUESTION)
    assert (result.reward, result.case) == (0.0, "answer_only")


def test_touched_nodes_come_from_every_tool_call_and_fall_back_on_structured_results():
    failed = call("code_interpreter", [FBN1], ok=False)
    legacy = call("node_id_retriever", [], result={"results": [{"index": ECTOPIA}, {"name": "no index"}]})
    coded = call("code_interpreter", [], result={"touched": [MARFAN]})
    assert touched_nodes(trajectory("\\answer{x}", failed, legacy, coded)) == {FBN1, ECTOPIA, MARFAN}
    assert clue_fraction({1, 2}, [2, 3, 4, 5]) == 0.25
    with pytest.raises(ValueError, match="without clue nodes"):
        clue_fraction({1}, [])


def test_stored_trajectories_score_like_live_ones():
    live = trajectory("\\answer{TGFBR1}", call("cypher", [MARFAN]))
    stored = Trajectory.from_dict(live.to_dict())
    assert REWARD(live.to_dict(), QUESTION) == REWARD(stored, QUESTION) == REWARD(live, QUESTION)
    assert graphscout_reward(live, QUESTION, GRAPH, delta=0.9).reward == pytest.approx(0.5)
    assert final_answer(live.to_dict()) == ("TGFBR1", "")


def test_bad_questions_and_trajectories_are_named():
    with pytest.raises(ValueError, match="not in 'clinical'"):
        REWARD(trajectory("\\answer{x}"), {**QUESTION, "clue_ids": ["HP:nope"]})
    with pytest.raises(ValueError, match="needs 'answer', 'answer_type' and non-empty 'clue_ids'"):
        REWARD(trajectory("\\answer{x}"), {**QUESTION, "clue_ids": []})
    with pytest.raises(ValueError, match="needs its 'messages'"):
        REWARD({"steps": []}, QUESTION)
    with pytest.raises(ValueError, match="delta must be in"):
        GraphScoutReward(GRAPH, delta=0)
