"""What one model reply may cost the ARK loop, through the real client and a scripted endpoint on loopback: arguments
nested 20,000 levels deep get an observation (no RecursionError); a reply with more tool calls than
``max_tool_calls_per_turn`` runs only that many, and the next request carries only those."""

from __future__ import annotations

import pytest

from ark.methods.ark.api import ARK
from ark.methods.ark.options import ArkOptions
from ark.runtime import tools
from tests.support.openai_server import tool_reply

from .test_agent import assert_well_formed, by_agent, client

NESTED = '{"query": ' + "[" * 20_000 + "]" * 20_000 + "}"


def test_arguments_nested_too_deep_get_an_observation_and_the_agent_goes_on(openai_server, graph, index, tmp_path):
    assert len(NESTED) < tools.MAX_ARGUMENT_CHARS  # under the size limit: only the depth check stops it
    openai_server.responder = by_agent([
        tool_reply(("search_in_graph", NESTED), ("search_in_neighborhood", '{"node_index": ' + "[" * 70 + "]" * 70
                                                 + "}")),
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": 3}]})),
        tool_reply(("finish", {})),
    ])
    result = ARK(graph, llm=client(openai_server, tmp_path, cache=True), index=index,
                 config=ArkOptions(n_agents=1, allow_unseen_answers=True)).retrieve("fever")
    trajectory = result.trajectories[0]
    assert trajectory.error is None and trajectory.stop_reason == "finish" and result.fused_ids == [3]
    first = trajectory.steps[0]
    assert [call.error for call in first.tool_calls] == ["arguments_too_deep"] * 2
    assert "20,001 levels" in first.observations[0] and f"at most {tools.MAX_ARGUMENT_DEPTH}" in first.observations[0]
    assert not first.tool_calls[0].parsed_ok
    assert_well_formed(trajectory)


@pytest.mark.parametrize(("cap", "expected"), [(None, 32), (3, 3)])
def test_tool_calls_beyond_the_cap_are_answered_not_run(openai_server, graph, index, tmp_path, cap, expected):
    many = [("search_in_graph", {"query": f"seizure {n}"}) for n in range(40)]
    openai_server.responder = by_agent([tool_reply(*many), tool_reply(("finish", {}))])
    overrides = {} if cap is None else {"max_tool_calls_per_turn": cap}
    llm = client(openai_server, tmp_path, **overrides)
    result = ARK(graph, llm=llm, index=index, n_agents=1).retrieve("seizure")
    trajectory = result.trajectories[0]
    first = trajectory.steps[0]
    assert trajectory.stop_reason == "finish" and len(first.tool_calls) == expected
    assert f"{40 - expected} more tool call(s) in this reply were not run" in first.observations[-1]
    assert f"at most {expected}" in first.observations[-1]
    second_request = openai_server.requests[1]["messages"]
    assert sum(m["role"] == "tool" for m in second_request) == expected
    assert len(second_request[2]["tool_calls"]) == expected
    assert_well_formed(trajectory)


# Arguments the JSON reader refuses with other errors than a syntax error, under the size and depth limits: an
# integer longer than Python converts from text, and a nested JSON document double-encoded as a string (the depth
# check skips strings; the tools that accept double-encoded arguments decode it).
LONG_INTEGER = '{"node_index": ' + "7" * 20_000 + "}"
ENCODED_NESTED = '{"answer_nodes": "' + "[" * 20_000 + "]" * 20_000 + '"}'


def test_arguments_the_reader_refuses_get_an_observation_and_the_agent_goes_on(openai_server, graph, index,
                                                                               tmp_path):
    openai_server.responder = by_agent([
        tool_reply(("search_in_neighborhood", LONG_INTEGER), ("add_to_answer", ENCODED_NESTED)),
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": 3}]})),
        tool_reply(("finish", {})),
    ])
    result = ARK(graph, llm=client(openai_server, tmp_path, cache=True), index=index,
                 config=ArkOptions(n_agents=1, allow_unseen_answers=True)).retrieve("fever")
    trajectory = result.trajectories[0]
    assert trajectory.error is None and trajectory.stop_reason == "finish" and result.fused_ids == [3], trajectory.error
    first = trajectory.steps[0]
    assert all(call.error for call in first.tool_calls) and len(first.observations) == 2, first.observations
    assert_well_formed(trajectory)
