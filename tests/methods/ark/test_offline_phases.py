"""The offline policy's phases (``ark.methods.ark.offline.phases``): planning reads the evidence and never writes
it, so a replay may plan as often as it needs and still give the recorded reply; anchors are typed records.

Recorded trajectories of three agents each (agents after the first shuffle their neighbourhood queries, seeded)
on the clinical graph and on the conditions graph, where a budget of 2 makes the policy page and check conditions
and a two-hop question goes through an intermediate type.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses

import pytest

from ark.index import open_index
from ark.methods.ark.api import ARK
from ark.methods.ark.offline import OfflinePolicy
from ark.methods.ark.offline.evidence import Anchor
from ark.methods.ark.offline.phases import PHASES
from ark.methods.ark.options import ToolConfig
from tests.support.graphs import (
    ATTRIBUTE_QUESTION,
    CONJUNCTION_QUESTION,
    SHARED_FINDINGS,
    TWO_HOP,
    TWO_HOP_QUESTION,
    build_clinical_graph,
    build_conditions_graph,
)

PROFILE = ("Findings: ectopia lentis, arachnodactyly, aortic root dilatation, tall stature, myopia, joint "
           "hypermobility. Absent: bifid uvula, hypertelorism. Which disease?")
CASES = {  # question -> (graph, neighbourhood budget)
    PROFILE: ("clinical", 20),
    SHARED_FINDINGS[0]: ("clinical", 20),
    TWO_HOP[0]: ("clinical", 20),
    CONJUNCTION_QUESTION: ("conditions", 2),
    ATTRIBUTE_QUESTION: ("conditions", 2),
    TWO_HOP_QUESTION: ("conditions", 20),
}


@pytest.fixture(scope="module")
def graphs():
    built = {"clinical": build_clinical_graph(), "conditions": build_conditions_graph()}
    return {name: (graph, open_index(graph, progress=False)) for name, graph in built.items()}


@pytest.fixture(scope="module")
def recorded(graphs):
    """question -> (graph, the retrieval of three offline agents)."""
    out = {}
    for question, (name, budget) in CASES.items():
        graph, index = graphs[name]
        ark = ARK(graph, llm=None, index=index, n_agents=3, tool_config=ToolConfig(neighborhood_budget=budget))
        out[question] = (graph, ark.retrieve(question))
    return out


def tool_names(trajectory) -> set[str]:
    return {t["function"]["name"] for t in trajectory.tools}


def step_prefixes(messages):
    """Each assistant message's position with the conversation before it."""
    for position, message in enumerate(messages):
        if message.role == "assistant":
            yield position, messages[:position]


@pytest.mark.parametrize("question", list(CASES))
def test_planning_twice_gives_the_same_calls_and_leaves_the_evidence_unchanged(recorded, question):
    graph, result = recorded[question]
    policy = OfflinePolicy(graph)
    planned = set()
    for trajectory in result.trajectories:
        names = tool_names(trajectory)
        for _, prefix in step_prefixes(trajectory.messages):
            evidence, _ = policy.replay(prefix, trajectory.agent_index, names)
            before = copy.deepcopy(evidence)
            for phase in policy.phases:
                first = phase.plan(evidence, names)
                assert phase.plan(evidence, names) == first, f"{phase.name} planned differently the second time"
                assert evidence == before, f"planning {phase.name} changed the evidence"
                if first.calls:
                    planned.add(phase.name)
    assert {"anchor", "expand", "answer", "finish"} <= planned


@pytest.mark.parametrize("question", list(CASES))
def test_a_replay_that_plans_every_phase_twice_gives_the_recorded_replies(recorded, question, monkeypatch):
    graph, result = recorded[question]
    for phase in PHASES:
        def twice(self, evidence, names, _plan=phase.plan):
            _plan(self, evidence, names)  # an extra planning, as a replay that checks its alignment would do
            return _plan(self, evidence, names)

        monkeypatch.setattr(phase, "plan", twice)
    policy = OfflinePolicy(graph)
    for trajectory in result.trajectories:
        for position, prefix in step_prefixes(trajectory.messages):
            reply = asyncio.run(policy.next_message(prefix, trajectory.tools, agent_index=trajectory.agent_index))
            recorded = trajectory.messages[position].to_openai()
            assert reply.message.to_openai() == recorded, f"agent {trajectory.agent_index}, {position}"


def test_agents_after_the_first_query_neighbourhoods_in_their_own_seeded_order(recorded):
    """The shuffled query is a function of the question and the agent, the same at every replay."""
    graph, result = recorded[PROFILE]
    policy = OfflinePolicy(graph)
    queries = {}
    for trajectory in result.trajectories:
        _, prefix = list(step_prefixes(trajectory.messages))[1]  # before the expand step
        evidence, position = policy.replay(prefix, trajectory.agent_index, tool_names(trajectory))
        assert policy.phases[position].name == "expand"
        plans = {str(policy.phases[position].plan(evidence, tool_names(trajectory)).calls) for _ in range(3)}
        assert len(plans) == 1
        queries[trajectory.agent_index] = plans.pop()
    assert len(set(queries.values())) == 3  # the first agent's question, two different shuffles


def test_anchors_are_records_of_the_named_nodes_and_absent_findings_are_marked(recorded):
    graph, result = recorded[PROFILE]
    policy = OfflinePolicy(graph)
    trajectory = result.trajectories[0]
    _, prefix = list(step_prefixes(trajectory.messages))[1]  # the anchor step and its results
    evidence, _ = policy.replay(prefix, 0, tool_names(trajectory))
    assert evidence.anchors and all(isinstance(a, Anchor) for a in evidence.anchors)
    for anchor in evidence.anchors:
        assert (anchor.name, anchor.type) == (graph.name(anchor.index), graph.node_type(anchor.index))
    absent = {a.name for a in evidence.anchors if a.negated}
    present = {a.name for a in evidence.positive_anchors()}
    assert absent == {"Bifid uvula", "Hypertelorism"}
    assert {"Ectopia lentis", "Arachnodactyly", "Tall stature", "Myopia"} <= present and not present & absent
    # The expand phase starts one neighbourhood search from each anchor the answers should be linked to.
    expand = next(p for p in policy.phases if p.name == "expand")
    centres = [args["node_index"] for _, args in expand.plan(evidence, tool_names(trajectory)).calls]
    assert centres == [a.index for a in evidence.positive_anchors()]
    with pytest.raises(dataclasses.FrozenInstanceError):
        evidence.anchors[0].negated = True  # type: ignore[misc]
