"""``graph-cot``: Graph-CoT's loop on the scripted server: one action a reply, its observation in the next request,
Finish ends it, the step cap stops it, a malformed action is an observation."""

from __future__ import annotations

from tests.support.openai_server import text_reply

from .conftest import build

QUESTION = "Which genes are implicated in Marfan syndrome?"
SCRIPT = [
    "Thought: I need the disease node.\nAction: RetrieveNode[Marfan syndrome]",
    "Thought: its genes.\nAction: NeighbourCheck[OMIM:154700, associated_gene]",
    "Thought: let me try something.\nAction: Frobnicate[OMIM:154700]",
    "Action: NodeDegree[OMIM:154700, gene]",
    "Action: NodeFeature[NCBIGene:2200, text]",
    "Action: NeighborCheck[NO:SUCH, gene]",
    "Thought: FBN1 it is.\nAction: Finish[FBN1]",
]


def test_each_observation_answers_the_previous_action_until_finish(openai_server, chat, clinical):
    openai_server.enqueue(*[text_reply(step) for step in SCRIPT])
    output = build("graph-cot", clinical, chat).retrieve(QUESTION, 10)
    requests = openai_server.requests
    assert len(requests) == len(SCRIPT)  # Finish stops the loop: no further call
    system = requests[0]["messages"][0]["content"]
    assert all(name in system for name in ("RetrieveNode[", "NodeFeature[", "NeighbourCheck[", "NodeDegree["))
    assert "disease -associated_gene-> gene" in system  # the graph's schema
    observations = [r["messages"][-1]["content"] for r in requests[1:]]
    assert observations[0].startswith("Observation: The best match is node OMIM:154700")
    assert observations[1] == "Observation: associated_gene neighbours of OMIM:154700: NCBIGene:2200 (FBN1)"
    assert "No action found" in observations[2] and "NodeDegree[node id" in observations[2]
    assert observations[3] == "Observation: Node OMIM:154700 has 1 gene neighbours."
    assert "Fibrillin 1" in observations[4]
    assert "no node with id 'NO:SUCH'" in observations[5]
    assert [r["messages"][-2]["content"] for r in requests[1:]] == SCRIPT[:-1]  # the model's turns stay in history
    assert output.answer.text == "FBN1" and output.indices[0] == clinical.index_of("NCBIGene:2200")
    assert [s["valid"] for s in output.record.details["steps"]] == [True, True, False, True, True, False, True]
    assert output.record.details["failures"] == []


def test_the_step_cap_stops_a_run_without_an_answer(openai_server, chat, clinical):
    openai_server.enqueue(*[text_reply("Action: RetrieveNode[seizure]")] * 3)
    output = build("graph-cot", clinical, chat, max_steps=3).retrieve(QUESTION, 10)
    assert len(openai_server.requests) == 3 and output.answer.text == ""
    assert output.record.details["failures"] == ["no Finish action within max_steps=3"]


def test_unknown_relations_and_features_are_observations_naming_the_valid_ones(clinical):
    from ark.index import open_index
    from ark.methods.graph_text import GraphFunctions

    functions = GraphFunctions(clinical, open_index(clinical, "bm25", progress=False))
    result = functions.run("Action: NeighbourCheck[OMIM:154700, treats]")
    assert not result.valid and "its relations: associated_gene, has_phenotype" in result.observation
    result = functions.run("Action: NodeFeature[OMIM:154700, colour]")
    assert not result.valid and "its features: name, type, text" in result.observation
    assert not functions.run("Action: NodeDegree[OMIM:154700]").valid  # one argument of two
    assert functions.run("Action: NodeDegree[OMIM:154700, phenotypes]").observation.endswith("has 6 phenotypes "
                                                                                            "neighbours.")


def test_ark_eval_scores_a_right_answer(eval_run, openai_server):
    openai_server.enqueue(text_reply("Action: RetrieveNode[Marfan syndrome]"), text_reply("Action: Finish[FBN1]"))
    _, summary, rows = eval_run("graph-cot", [{"id": "a", "query": QUESTION, "answer": "FBN1"}])
    assert rows["a"]["answer_metrics"]["exact_match"] == 1.0 and summary["answers"]["exact_match"] == 1.0
