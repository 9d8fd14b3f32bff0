"""The offline policy (``ark.methods.ark.offline.OfflinePolicy``) driving the real ARK loop on the small clinical graph.

Each of its strategies must find the expected answer, and every trajectory it writes must be usable as a
distillation sample: well-formed OpenAI messages, arguments valid for the tools' argument models, a final finish.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ark.index import open_index
from ark.methods.ark.api import ARK
from ark.methods.ark.offline import OfflinePolicy
from ark.methods.ark.options import ToolConfig
from ark.methods.ark.tools import TOOL_SPECS, Toolbox
from ark.runtime.records import Retrieval
from ark.storage.jsonl import read_jsonl
from tests.support.graphs import BROAD, ONE_HOP, SHARED_FINDINGS, TWO_HOP, build_clinical_graph

STRATEGY_QUESTIONS = {"one_hop": ONE_HOP, "shared_findings": SHARED_FINDINGS, "two_hop": TWO_HOP, "broad": BROAD}
LOEYS_DIETZ_GENES = ("Which genes are associated with Loeys-Dietz syndrome?", {"NCBIGene:7046", "NCBIGene:7048"})
MANY_FINDINGS = ("Findings: ectopia lentis, arachnodactyly, aortic root dilatation, tall stature, myopia, joint "
                 "hypermobility, bifid uvula, hypertelorism. Which disease?")
VACUOUS_QUESTIONS = ["which of the the?", "?", "", "What is it?"]


@pytest.fixture(scope="module")
def graph():
    return build_clinical_graph()


@pytest.fixture(scope="module")
def index(graph):
    return open_index(graph, progress=False)


def retrieve(graph, index, question: str, **options) -> Retrieval:
    return ARK(graph, llm=None, index=index, **options).retrieve(question)


def calls_of(trajectory) -> list[tuple[str, dict]]:
    return [(call.name, json.loads(call.arguments)) for step in trajectory.steps for call in step.tool_calls]


def neighborhood_calls(trajectory, graph) -> list[tuple[str, str | None]]:
    """(centre node id, node type filter) of each search_in_neighborhood call (the policy sends one-type sets)."""
    return [(graph.node_id(args["node_index"]), (args.get("node_types") or [None])[0])
            for name, args in calls_of(trajectory) if name == "search_in_neighborhood"]


def assert_distillable(retrieval: Retrieval) -> None:
    """Every SFT sample alternates correctly, every call validates against its tool's model, and ends in finish."""
    samples = retrieval.to_sft_samples()
    assert len(samples) == len(retrieval.trajectories)
    for sample in samples:
        assert [t["function"]["name"] for t in json.loads(sample["tools"])] == list(TOOL_SPECS)
        messages = sample["messages"]
        assert messages[0]["role"] == "user" and all(m["role"] != "system" for m in messages)
        position, last_call = 1, None
        while position < len(messages):
            message = messages[position]
            assert message["role"] == "assistant", f"message {position} should be the assistant's: {message}"
            calls = message.get("tool_calls") or []
            assert calls, f"assistant message {position} has no tool call"
            answers = messages[position + 1: position + 1 + len(calls)]
            assert [m["role"] for m in answers] == ["tool"] * len(calls)
            assert [m["tool_call_id"] for m in answers] == [c["id"] for c in calls]
            assert len({c["id"] for c in calls}) == len(calls)
            for call in calls:
                assert call["type"] == "function"
                name, raw = call["function"]["name"], call["function"]["arguments"]
                assert isinstance(raw, str)
                TOOL_SPECS[name].args_model.model_validate(json.loads(raw))
                last_call = name
            position += 1 + len(calls)
        assert last_call == "finish"
    for trajectory in retrieval.trajectories:
        assert trajectory.stop_reason == "finish" and trajectory.finished and trajectory.error is None
        assert all(call.parsed_ok for step in trajectory.steps for call in step.tool_calls)


def assert_calls_accepted(retrieval: Retrieval) -> None:
    """No call of a teacher trajectory is refused by the tools (a refused call would teach a student to err)."""
    for trajectory in retrieval.trajectories:
        refused = [(c.name, c.arguments, c.error) for s in trajectory.steps for c in s.tool_calls if not c.ok]
        assert refused == [] and trajectory.telemetry["invalid_calls"] == 0


# ------------------------------------------------------------------------------------------------ strategies
@pytest.mark.parametrize("strategy", list(STRATEGY_QUESTIONS))
def test_each_strategy_ranks_the_expected_node_first(graph, index, strategy):
    question, expected = STRATEGY_QUESTIONS[strategy]
    result = retrieve(graph, index, question)
    assert result.ranked and result.ranked[0].node_id == expected, [n.node_id for n in result.ranked]
    assert result.policy == "offline" and len(result.trajectories) == 3
    assert_distillable(result)
    assert_calls_accepted(result)


def test_one_hop_explores_the_named_entity_filtered_to_the_wanted_type(graph, index):
    trajectory = retrieve(graph, index, ONE_HOP[0], n_agents=1).trajectories[0]
    assert neighborhood_calls(trajectory, graph) == [("OMIM:154700", "gene")]
    assert trajectory.answer_ids == ["NCBIGene:2200"]
    assert "Marfan syndrome" in trajectory.reasoning[graph.index_of("NCBIGene:2200")]


def test_one_hop_keeps_every_linked_node_of_the_wanted_type(graph, index):
    question, genes = LOEYS_DIETZ_GENES
    result = retrieve(graph, index, question)
    assert {n.node_id for n in result.ranked[:2]} == genes
    assert all(n.votes == 3 for n in result.ranked[:2])


def test_shared_findings_checks_the_candidates_against_the_findings(graph, index):
    trajectory = retrieve(graph, index, SHARED_FINDINGS[0], n_agents=1).trajectories[0]
    calls = neighborhood_calls(trajectory, graph)
    anchors = {"HP:0001083", "HP:0001166", "HP:0002616", "HP:0000098"}
    assert {centre for centre, _ in calls} >= anchors  # every finding explored ...
    assert all(kind == "disease" for centre, kind in calls if centre in anchors)
    assert ("OMIM:236200", "phenotype") in calls  # ... and a rival candidate verified against the findings
    assert trajectory.answer_ids[0] == "OMIM:154700"


def test_two_hop_goes_through_the_intermediate_type(graph, index):
    trajectory = retrieve(graph, index, TWO_HOP[0], n_agents=1).trajectories[0]
    calls = neighborhood_calls(trajectory, graph)
    assert calls[0] == ("HP:0002373", "disease")  # febrile seizure → diseases (no phenotype-gene edge)
    assert ("OMIM:607208", "gene") in calls[1:]  # Dravet syndrome → genes
    assert trajectory.answer_ids[0] == "NCBIGene:6323"


def test_broad_fallback_answers_from_one_global_search(graph, index):
    trajectory = retrieve(graph, index, BROAD[0], n_agents=1).trajectories[0]
    names = [name for name, _ in calls_of(trajectory)]
    assert "search_in_neighborhood" not in names
    assert names[-2:] == ["add_to_answer", "finish"]
    assert trajectory.answer_ids[0] == "OMIM:306700"
    assert all(graph.node_type(i) == "disease" for i in trajectory.answer)


# ------------------------------------------------------------------------------------------------ determinism
def test_same_question_gives_identical_trajectories(graph, index):
    first = retrieve(graph, index, SHARED_FINDINGS[0])
    second = retrieve(graph, index, SHARED_FINDINGS[0])
    assert [t.messages for t in first.trajectories] == [t.messages for t in second.trajectories]
    assert first.fused_ids == second.fused_ids


def test_agents_make_different_choices_when_there_are_enough_anchors(graph, index):
    """The policy promises seeded per-agent choices (which anchors to keep, how many candidates to verify) so
    that voting has something to fuse; eight named findings are enough anchors for that on any tuning so far."""
    result = retrieve(graph, index, MANY_FINDINGS, n_agents=3)
    histories = [json.dumps([m.to_openai() for m in t.messages[2:]]) for t in result.trajectories]
    assert len(set(histories)) > 1
    assert_distillable(result)
    assert_calls_accepted(result)
    assert result.ranked[0].node_id == "OMIM:154700" and result.ranked[0].votes == 3


def test_replaying_a_recorded_conversation_gives_the_recorded_next_message(graph, index):
    """The policy is a pure function of the conversation: every prefix of a trajectory yields its next step."""
    result = retrieve(graph, index, SHARED_FINDINGS[0], n_agents=2)
    policy = OfflinePolicy(graph)
    for trajectory in result.trajectories:
        messages = trajectory.messages
        for position, message in enumerate(messages):
            if message.role != "assistant":
                continue
            reply = asyncio.run(policy.next_message(messages[:position], trajectory.tools,
                                                    agent_index=trajectory.agent_index))
            assert reply.message == message, f"agent {trajectory.agent_index}, message {position}"


# ------------------------------------------------------------------------------------------------ edge cases
@pytest.mark.parametrize("question", VACUOUS_QUESTIONS)
def test_questions_without_content_finish_with_a_small_answer(graph, index, question):
    result = retrieve(graph, index, question)
    assert_distillable(result)
    assert len(result.ranked) <= 3
    assert all(len(t.steps) <= 3 for t in result.trajectories)


@pytest.mark.parametrize("question", VACUOUS_QUESTIONS)
def test_questions_without_content_make_no_call_the_tools_refuse(graph, index, question):
    assert_calls_accepted(retrieve(graph, index, question, n_agents=1))


def test_without_the_neighborhood_tool_the_policy_uses_only_offered_tools(graph, index):
    result = ARK(graph, llm=None, index=index, n_agents=2,
                 tool_config=ToolConfig.for_ablation("no_neighbors")).retrieve(SHARED_FINDINGS[0])
    offered = {t["function"]["name"] for t in result.trajectories[0].tools}
    assert "search_in_neighborhood" not in offered
    for trajectory in result.trajectories:
        assert {name for name, _ in calls_of(trajectory)} <= offered
        assert trajectory.stop_reason == "finish" and trajectory.error is None


def test_a_step_budget_too_small_stops_cleanly(graph, index):
    result = retrieve(graph, index, TWO_HOP[0], n_agents=2, max_steps=2)
    for trajectory in result.trajectories:
        assert trajectory.stop_reason == "max_steps" and len(trajectory.steps) == 2 and trajectory.error is None
        assert all(call.ok for step in trajectory.steps for call in step.tool_calls)


class SilentToolbox(Toolbox):
    """The real tools, but every observation text is blanked: only the structured results remain."""

    def execute(self, name, arguments):
        result = super().execute(name, arguments)
        result.text = ""
        return result


@pytest.mark.parametrize("strategy", list(STRATEGY_QUESTIONS))
def test_the_policy_reads_structured_results_not_observation_text(graph, index, strategy):
    question = STRATEGY_QUESTIONS[strategy][0]
    normal = ARK(graph, llm=None, index=index)
    silent = ARK(graph, llm=None, index=index)
    silent.toolbox = lambda: SilentToolbox(graph, index, silent.config.tools)
    a, b = normal.retrieve(question), silent.retrieve(question)
    assert all(not m.content for t in b.trajectories for m in t.messages if m.role == "tool")
    assert [calls_of(t) for t in a.trajectories] == [calls_of(t) for t in b.trajectories]
    assert a.fused_ids == b.fused_ids and a.fused_ids


def test_trajectory_files_written_before_structured_results_still_load(tmp_path):
    """A record written by ARK before tool results carried structure: shown, re-read and exported unchanged."""
    from typer.testing import CliRunner

    from ark.cli.main import app

    path = Path(__file__).resolve().parents[2] / "fixtures" / "trajectory-before-structured-results.jsonl"
    [record] = read_jsonl(path)
    retrieval = Retrieval.from_dict(record)
    assert retrieval.ranked[0].node_id == ONE_HOP[1] and len(retrieval.trajectories) == 2
    assert all(call.result is None for t in retrieval.trajectories for s in t.steps for call in s.tool_calls)
    samples = retrieval.to_sft_samples()
    assert samples[0]["messages"] == [m for m in record["agents"][0]["messages"] if m["role"] != "system"]
    assert_distillable(retrieval)
    shown = CliRunner().invoke(app, ["trajectory", "show", str(path)])
    assert shown.exit_code == 0 and "FBN1" in shown.stdout and "search_in_graph" in shown.stdout
