"""The GraphScout solver end to end with the offline scripted solver: answers of every type computed by Cypher,
the trajectory in ARK's record format, touched nodes as the ranking, the answer wrapper, the turn budget, the
retriever-only ablation, the system prompt (every example executed) and the registered method."""

from __future__ import annotations

import asyncio
import json

import pytest

from ark.llm.policy import PolicyReply
from ark.methods import build_method
from ark.methods.base import Answer
from ark.methods.graphscout.answer import answer_type, extract_answer
from ark.methods.graphscout.options import GraphScoutOptions
from ark.methods.graphscout.prompt import cypher_examples, render_system_prompt
from ark.methods.graphscout.solver import NO_ANSWER_MESSAGE, GraphScout, names_in
from ark.methods.graphscout.tools import CODE_INTERPRETER, NODE_ID_RETRIEVER
from ark.metrics import exact_match
from ark.runtime.records import Trajectory


def solve(scout, question):
    return asyncio.run(scout.asolve(question))


@pytest.mark.parametrize(("question", "kind", "truth"), [
    ("How many genes are associated with Loeys-Dietz syndrome?", "number", "2"),
    ("How many phenotypes does Dravet syndrome have?", "number", "4"),
    ("Which genes are associated with Loeys-Dietz syndrome?", "set", "TGFBR1, TGFBR2"),
    ("Is FBN1 associated with Marfan syndrome?", "boolean", "yes"),
    ("Is F8 associated with Marfan syndrome?", "boolean", "no"),
    ("What is the parent term of Febrile seizure?", "entity", "Seizure"),
])
def test_offline_solver_answers_with_cypher(scout, question, kind, truth):
    solution = solve(scout, question)
    assert solution.answer is not None and solution.answer.type == kind
    assert exact_match(solution.answer.text, truth, kind) == 1.0
    trajectory = solution.trajectory
    assert trajectory.stop_reason == "answer" and trajectory.finished
    calls = [call.name for step in trajectory.steps for call in step.tool_calls]
    assert calls == [NODE_ID_RETRIEVER, CODE_INTERPRETER]  # ground, query, answer
    code = json.loads(trajectory.steps[1].tool_calls[0].arguments)["code"]
    assert "cypher(" in code and "MATCH" in code
    assert trajectory.messages[-1].content.splitlines()[-1] == f"\\answer{{{solution.answer.text}}}"


def test_trajectory_is_an_ark_record_and_ranks_answer_nodes_first(scout, clinical):
    solution = solve(scout, "Which genes are associated with Loeys-Dietz syndrome?")
    ranked = [(node.node_id, node.in_answer) for node in solution.ranked]
    assert ranked[:2] == [("NCBIGene:7046", True), ("NCBIGene:7048", True)]
    assert ("OMIM:609192", False) in ranked[2:]  # the anchor was touched too, after the answer nodes
    assert solution.trajectory.answer_ids == [node_id for node_id, _ in ranked]
    record = json.loads(json.dumps(solution.to_dict()))
    assert record["answer"] == {"text": "TGFBR1, TGFBR2", "type": "set"}
    again = Trajectory.from_dict(record["agents"][0])
    assert [m.role for m in again.messages] == ["system", "user", "assistant", "tool", "assistant", "tool",
                                                  "assistant"]
    assert again.steps[1].tool_calls[0].result["touched"]  # the structured result is kept in the record
    assert again.messages[5].result is again.steps[1].tool_calls[0].result  # the tool message holds it again
    assert "result" not in record["agents"][0]["messages"][3]  # but not the messages the model saw
    assert {t["function"]["name"] for t in again.tools} == {NODE_ID_RETRIEVER, CODE_INTERPRETER}
    assert again.telemetry["code_calls"] == 1 and again.telemetry["retriever_calls"] == 1


def test_question_without_a_plan_gets_no_answer(scout):
    solution = solve(scout, "Tell me something interesting.")
    assert solution.answer is None and solution.trajectory.stop_reason == "answer"
    assert extract_answer(solution.trajectory.messages[-1].content) == ""


class Scripted:
    """A policy replaying fixed assistant messages (to drive the loop into its edge cases)."""

    name = "scripted"

    def __init__(self, *messages: dict) -> None:
        self.messages = list(messages)

    async def next_message(self, messages, tools, *, agent_index=0, tool_choice="required"):
        turn = sum(1 for m in messages if m.role == "assistant")
        return PolicyReply(self.messages[min(turn, len(self.messages) - 1)])

    async def aclose(self):
        return None


def retriever_call(turn: int) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{turn}", "type": "function", "function": {
        "name": NODE_ID_RETRIEVER, "arguments": json.dumps({"queries": ["Marfan syndrome"]})}}]}


def test_turn_budget_ends_a_trajectory_without_an_answer(scout, clinical):
    options = GraphScoutOptions(max_turns=3)
    looping = GraphScout(clinical, Scripted(retriever_call(0)), options, engine=scout.engine, index=scout.index)
    solution = asyncio.run(looping.asolve("How many genes are associated with Marfan syndrome?"))
    looping.close()
    assert solution.answer is None and solution.trajectory.stop_reason == "max_steps"
    assert len(solution.trajectory.steps) == 3 and "at most 3 turns" in looping.system_prompt
    assert solution.ranked  # the nodes it touched are still its retrieval output


def test_a_reply_without_the_wrapper_is_asked_for_it(scout, clinical):
    policy = Scripted(retriever_call(0), {"role": "assistant", "content": "It is one gene."},
                      {"role": "assistant", "content": "Counting again.\n\\answer{1}\n```"})
    solver = GraphScout(clinical, policy, engine=scout.engine, index=scout.index)
    solution = asyncio.run(solver.asolve("How many genes are associated with Marfan syndrome?"))
    solver.close()
    assert solution.answer == Answer("1", "number")
    assert solution.trajectory.steps[1].corrective == NO_ANSWER_MESSAGE
    assert any(m.to_openai() == {"role": "user", "content": NO_ANSWER_MESSAGE} for m in solution.trajectory.messages)


def test_retriever_only_ablation(scout, clinical):
    ablated = GraphScout(clinical, options=GraphScoutOptions(code_interpreter=False), engine=scout.engine,
                         index=scout.index)
    assert ablated.pool is None and "There is no code interpreter" in ablated.system_prompt
    assert "cypher(" not in ablated.system_prompt.split("# The graph")[1]
    solution = asyncio.run(ablated.asolve("Is FBN1 associated with Marfan syndrome?"))
    assert [c.name for s in solution.trajectory.steps for c in s.tool_calls] == [NODE_ID_RETRIEVER]
    assert solution.answer is not None and solution.answer.type == "boolean"
    counted = asyncio.run(ablated.asolve("How many genes are associated with Loeys-Dietz syndrome?"))
    assert counted.answer is not None and counted.answer.text != "2"  # retrieval alone cannot count


@pytest.mark.parametrize(("content", "expected"), [
    ("The answer is below.\n\\answer{Marfan syndrome}", "Marfan syndrome"),
    ("\\answer{ 12 }\n\n```", "12"),
    ("\\answer{{a, b}}", "{a, b}"),
    ("\\answer{}", ""),
    ("\\answer{Marfan syndrome}\nI hope this helps.", None),  # not on the last line
    ("\\answer{unclosed", None),
    (None, None),
])
def test_answer_wrapper(content, expected):
    assert extract_answer(content) == expected


@pytest.mark.parametrize(("question", "expected"), [
    ("How many genes are associated with X?", "number"),
    ("Is FBN1 associated with X?", "boolean"),
    ("Can you name the genes of X?", "set"),
    ("What is the parent term of X?", "entity"),
    ("Which gene is associated with X?", "entity"),
    ("Which genes are associated with X?", "set"),
])
def test_answer_type_of_a_question(question, expected):
    assert answer_type(question, ["gene"]) == expected


def test_names_in_keeps_names_with_commas_whole():
    answer = "Ehlers-Danlos syndrome, vascular type, Marfan syndrome"
    assert names_in("Ehlers-Danlos syndrome, vascular type", answer) and names_in("marfan SYNDROME", answer)
    assert not names_in("vascular type, Marfan", "Marfan")


def test_system_prompt_describes_the_graph_and_every_example_runs(scout, clinical):
    prompt = render_system_prompt(clinical, scout.schema, limits=scout.pool.limits)
    for part in ("clinical knowledge graph", "phenotype", "disease", "gene", "id STRING, name STRING, text STRING",
                 "has_phenotype", "associated_gene", "is_a", "node_id_retriever(queries, topk=2)",
                 "code_interpreter(code)", "\\answer{...}", "at most 10 turns"):
        assert part in prompt, part
    examples = cypher_examples(clinical, scout.schema)
    assert examples and all(example.code() in prompt for example in examples)
    for example in examples:  # every example in the prompt runs against the engine and finds rows
        assert scout.engine.query(example.cypher, example.params, limit=100).rows, example


def test_registered_method_returns_answer_trajectory_and_touched_ranking(clinical, tmp_path):
    method = build_method("graphscout", clinical, {"max_turns": 5})
    output = method.retrieve("Which genes are associated with Loeys-Dietz syndrome?", k=2)
    assert output.answer == Answer("TGFBR1, TGFBR2", "set")
    assert [clinical.node_id(i) for i in output.indices] == ["NCBIGene:7046", "NCBIGene:7048"]  # cut to k
    assert output.scores == [1.0, 1.0]
    assert len(output.trajectories) == 1 and output.trajectories[0].stop_reason == "answer"
    assert output.record.answer.text == "TGFBR1, TGFBR2" and output.record.config["max_turns"] == 5
    assert output.record_dict()["answer"] == {"text": "TGFBR1, TGFBR2", "type": "set"}


@pytest.mark.slow
def test_offline_solver_matches_the_graph_truth_on_generated_hpo_questions():
    """The full method (retriever, sandboxed Cypher, wrapper) on questions whose answers were computed by walking
    the graph in memory; benchmarks/bench_scripted_solver.py runs 50 per type."""
    from ark.loaders import open_graph
    from ark.methods.graphscout.synthetic import TEMPLATES, QuestionMaker

    graph = open_graph("hpo")
    method = build_method("graphscout", graph)
    maker = QuestionMaker(graph, seed=1)
    batches = {kind: maker.questions(kind, 10) for kind in TEMPLATES}

    async def run_all():
        try:
            return {kind: [await method.aretrieve(q.question, 20) for q in questions]
                    for kind, questions in batches.items()}
        finally:
            await method.aclose()

    outputs = asyncio.run(run_all())
    for kind, questions in batches.items():
        right = sum(output.answer is not None and exact_match(output.answer.text, q.answer, kind) == 1.0
                    for q, output in zip(questions, outputs[kind], strict=True))
        assert right >= 9, (kind, right)
