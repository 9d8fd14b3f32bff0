"""The ARK loop end to end: the real `openai` client against a scripted chat-completions server on loopback."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from ark.llm import OpenAIChatClient, resolve_settings
from ark.methods.ark.api import ARK, AgentError
from ark.methods.ark.loop import NO_TOOL_CALL_MESSAGE, run_agent
from ark.methods.ark.options import ArkOptions, ToolConfig
from ark.methods.ark.tools import Toolbox
from ark.runtime.records import Retrieval
from ark.runtime.trajectory_file import read_trajectory_file
from ark.storage.jsonl import read_jsonl
from tests.support.openai_server import http_error, text_reply, tool_reply, turn_script

SEED = 100  # the client sends seed + agent_index, which lets the server tell the agents apart


def client(server, tmp_path, cache: bool = False, **overrides) -> OpenAIChatClient:
    settings = resolve_settings(base_url=server.base_url, model="test-model", api_key="test-key", seed=SEED,
                                environ={}, config_path=tmp_path / "absent.toml", use_cache=cache,
                                cache_dir=tmp_path / "llm-cache", **overrides)
    return OpenAIChatClient(settings)


def by_agent(*scripts):
    """A responder playing ``scripts[agent_index]`` turn by turn."""
    players = [turn_script(script) for script in scripts]
    return lambda body: players[body["seed"] - SEED](body)


def assert_well_formed(trajectory) -> None:
    """Every tool call is answered by a tool message with its id; the record is JSON-serialisable."""
    messages = trajectory.to_dict()["messages"]  # the wire form, as the model saw it
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    for position, message in enumerate(messages):
        if message["role"] == "assistant":
            ids = [c["id"] for c in message.get("tool_calls", [])]
            following = messages[position + 1: position + 1 + len(ids)]
            assert [m.get("tool_call_id") for m in following] == ids
            assert all(m["role"] == "tool" and m["content"] for m in following)
            if not ids:
                assert messages[position + 1] == {"role": "user", "content": NO_TOOL_CALL_MESSAGE}
    json.dumps(trajectory.to_dict())


FULL_SCRIPT = [
    tool_reply(("search_in_graph", {"query": "Dravet syndrome"})),
    tool_reply(("search_in_neighborhood", {"node_index": 0, "query": "fever", "node_type": "Phenotype"})),
    tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": 3, "reasoning": "febrile"},
                                                   {"node_index": 2, "reasoning": "seizure"}]})),
    tool_reply(("finish", {})),
]


def test_full_trajectory_global_then_neighborhood_then_add_then_finish(openai_server, graph, index, tmp_path):
    openai_server.responder = by_agent(FULL_SCRIPT)
    ark = ARK(graph, llm=client(openai_server, tmp_path), index=index, n_agents=1,
              trajectory_path=tmp_path / "runs.jsonl")
    result = ark.retrieve("Which phenotypes of Dravet syndrome are triggered by fever?")
    assert result.fused_ids == [3, 2]
    assert [(n.node_id, n.votes) for n in result.ranked] == [("P:febrile", 1), ("P:seizure", 1)]
    trajectory = result.trajectories[0]
    assert trajectory.finished and trajectory.stop_reason == "finish" and trajectory.error is None
    assert [c.name for s in trajectory.steps for c in s.tool_calls] == [
        "search_in_graph", "search_in_neighborhood", "add_to_answer", "finish"]
    assert trajectory.answer_ids == ["P:febrile", "P:seizure"]
    assert "[0] Dravet syndrome (disease)" in trajectory.steps[0].observations[0]
    assert "-has_phenotype-> [3] Febrile seizure (phenotype)" in trajectory.steps[1].observations[0]
    assert trajectory.telemetry["global_calls"] == 1 and trajectory.telemetry["neighborhood_calls"] == 1
    assert trajectory.usage.total_tokens > 0 and all(s.wall_s > 0 for s in trajectory.steps)
    assert_well_formed(trajectory)
    first_request = openai_server.requests[0]
    assert first_request["tool_choice"] == "required" and len(first_request["tools"]) == 4
    assert first_request["messages"][1]["content"].startswith("Find nodes that answer the question: Which")
    assert openai_server.request_count == 4

    [packed] = read_jsonl(tmp_path / "runs.jsonl")
    assert packed["format"] == 2 and packed["fused_ids"] == [3, 2] and "agents" not in packed
    [record] = read_trajectory_file(tmp_path / "runs.jsonl")
    assert record["fused_ids"] == [3, 2] and record["config"]["max_steps"] == 20
    assert record == result.to_dict()
    agent = record["agents"][0]
    assert agent["steps"][1]["tool_calls"][0]["arguments"] == json.dumps(
        {"node_index": 0, "query": "fever", "node_type": "Phenotype"})
    assert Retrieval.from_dict(record).to_dict() == record
    reference = result.to_reference_format()
    assert reference["answer_indices"] == [3, 2] and reference["trajectories"][0]["steps"] == 4
    times = reference["trajectories"][0]["step_times"]
    assert times == sorted(times) and len(times) == 4
    [sample] = result.to_sft_samples()
    assert sample["messages"][0]["role"] == "user" and json.loads(sample["tools"]) == trajectory.tools
    assert all(isinstance(c["function"]["arguments"], str)
               for m in sample["messages"] if m["role"] == "assistant" for c in m.get("tool_calls", []))


def test_three_agents_fuse_by_votes(openai_server, graph, index, tmp_path):
    def adds(*nodes):
        return [tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": n} for n in nodes]}), delay_s=0.05),
                tool_reply(("finish", {}))]

    openai_server.responder = by_agent(adds(1, 2, 3), adds(3, 4), adds(4, 3, 5))
    result = ARK(graph, llm=client(openai_server, tmp_path), index=index,  # the agents answer without searching
                 config=ArkOptions(allow_unseen_answers=True)).retrieve("anything")
    # L = [1,2,3,3,4,4,3,5]: 3 has 3 votes, 4 has 2, then 1, 2, 5 by first position.
    assert result.fused_ids == [3, 4, 1, 2, 5]
    assert [n.votes for n in result.ranked] == [3, 2, 1, 1, 1]
    assert [t.answer for t in result.trajectories] == [[1, 2, 3], [3, 4], [4, 3, 5]]
    assert openai_server.max_in_flight >= 2  # the agents ran concurrently


def test_rate_limit_is_retried(openai_server, graph, index, tmp_path):
    openai_server.enqueue(http_error(429), tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": 6}]})),
                          tool_reply(("finish", {})))
    result = ARK(graph, llm=client(openai_server, tmp_path), index=index,
                 config=ArkOptions(n_agents=1, allow_unseen_answers=True)).retrieve("migraine gene")
    assert openai_server.request_count == 3
    assert result.fused_ids == [6] and result.trajectories[0].error is None


def test_misbehaving_model_still_yields_a_well_formed_trajectory(openai_server, graph, index, tmp_path):
    openai_server.responder = by_agent([
        tool_reply(("search_in_graph", '{"query": "seiz')),                    # malformed JSON
        tool_reply(("teleport", {"to": "Mars"}), ("search_in_graph", {"query": "seizure"})),  # unknown tool
        tool_reply(("search_in_neighborhood", {"node_index": 12345})),        # nonexistent node
        text_reply("I think the answer is Dravet syndrome."),                 # no tool call
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": 99}, {"node_index": 2}]})),
        tool_reply(("search_in_graph", {"query": "seizure"})),                # repeated identical call
    ])
    config = ArkOptions(max_steps=6)
    policy = client(openai_server, tmp_path)

    async def go():
        try:
            return await run_agent("q", lambda: Toolbox(graph, index), policy, config=config)
        finally:
            await policy.aclose()

    trajectory = asyncio.run(go())
    assert trajectory.stop_reason == "max_steps" and not trajectory.finished and trajectory.error is None
    assert len(trajectory.steps) == 6 and trajectory.answer == [2]
    calls = [c for s in trajectory.steps for c in s.tool_calls]
    assert [c.parsed_ok for c in calls][:2] == [False, True]
    assert [c.error for c in calls] == ["invalid_json", "unknown_tool", None, "unknown_node", None, None]
    assert "Available tools:" in trajectory.steps[1].observations[0]
    assert trajectory.steps[3].corrective == NO_TOOL_CALL_MESSAGE and trajectory.steps[3].tool_calls == []
    assert trajectory.telemetry["invalid_calls"] == 3 and trajectory.telemetry["repeated_calls"] == 1
    assert_well_formed(trajectory)


def test_a_failing_agent_fails_the_question_and_stops_the_others(openai_server, graph, index, tmp_path):
    slow = [tool_reply(("search_in_graph", {"query": "headache"}), delay_s=0.3)] * 5 + [tool_reply(("finish", {}))]
    openai_server.responder = by_agent(slow, [http_error(400, "bad request")])
    path = tmp_path / "runs.jsonl"
    ark = ARK(graph, llm=client(openai_server, tmp_path), index=index, n_agents=2, trajectory_path=path)
    with pytest.raises(AgentError, match=r"agent 1 of 2 failed: LLMError: .*HTTP 400") as info:
        ark.retrieve("headache")
    assert openai_server.base_url in str(info.value)
    assert openai_server.request_count <= 3  # the healthy agent was stopped, not run to its end
    assert not path.exists()  # nothing recorded for a failed question


def test_allow_partial_fuses_the_agents_that_finished_and_marks_the_result(openai_server, graph, index, tmp_path):
    openai_server.responder = by_agent(
        [tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": 4}]})), tool_reply(("finish", {}))],
        [http_error(400, "bad request")],
    )
    result = ARK(graph, llm=client(openai_server, tmp_path), index=index,
                 config=ArkOptions(n_agents=2, allow_unseen_answers=True), allow_partial=True).retrieve("headache")
    ok, failed = result.trajectories
    assert ok.finished and ok.answer == [4]
    assert failed.stop_reason == "error" and "HTTP 400" in failed.error and failed.steps == []
    assert result.fused_ids == [4] and result.partial
    assert result.to_dict()["partial"].startswith("1 of 2 agents failed: agent 1: LLMError")


def test_allow_partial_still_fails_when_every_agent_failed(openai_server, graph, index, tmp_path):
    openai_server.responder = by_agent([http_error(400, "bad request")], [http_error(400, "bad request")])
    ark = ARK(graph, llm=client(openai_server, tmp_path), index=index, n_agents=2, allow_partial=True)
    with pytest.raises(AgentError, match="all 2 agents failed"):
        ark.retrieve("headache")


def test_rerun_from_cache_makes_no_http_request(openai_server, graph, index, tmp_path):
    openai_server.responder = by_agent(FULL_SCRIPT, FULL_SCRIPT)
    first = ARK(graph, llm=client(openai_server, tmp_path, cache=True), index=index, n_agents=2).retrieve("q")
    requests = openai_server.request_count
    assert requests == 8
    rerun_client = client(openai_server, tmp_path, cache=True)
    again = ARK(graph, llm=rerun_client, index=index, n_agents=2).retrieve("q")
    assert openai_server.request_count == requests and rerun_client.cache_hits == 8
    assert again.fused_ids == first.fused_ids == [3, 2]
    assert all(s.cached for t in again.trajectories for s in t.steps)


def test_many_questions_share_one_concurrency_limit(openai_server, graph, index, tmp_path):
    openai_server.responder = turn_script([tool_reply(("finish", {}), delay_s=0.05)])
    ark = ARK(graph, llm=client(openai_server, tmp_path), index=index, n_agents=1)

    async def go():
        try:
            return await ark.aretrieve_many([f"question {i}" for i in range(6)], concurrency=2)
        finally:
            await ark.llm.aclose()

    results = asyncio.run(go())
    assert [r.question for r in results] == [f"question {i}" for i in range(6)]
    assert openai_server.request_count == 6 and openai_server.max_in_flight == 2


def test_ablation_config_reaches_the_request(openai_server, graph, index, tmp_path):
    openai_server.responder = turn_script([tool_reply(("finish", {}))])
    ARK(graph, llm=client(openai_server, tmp_path), index=index, n_agents=1,
        tool_config=ToolConfig.for_ablation("no_neighbors")).retrieve("q")
    request = openai_server.requests[0]
    assert [t["function"]["name"] for t in request["tools"]] == ["search_in_graph", "add_to_answer", "finish"]
    assert "search_in_neighborhood" not in request["messages"][0]["content"]


def test_trajectory_show_renders_a_record(openai_server, graph, index, tmp_path):
    import typer

    from ark.cli.trajectory_cmd import register

    openai_server.responder = by_agent(FULL_SCRIPT)
    path = tmp_path / "runs.jsonl"
    ARK(graph, llm=client(openai_server, tmp_path), index=index, n_agents=1, trajectory_path=path).retrieve("q1")
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, ["trajectory", "show", str(path)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    for text in ("Question: q1", "search_in_graph", "search_in_neighborhood", "Added: [3] P:febrile",
                 "Fused ranking", "Febrile seizure"):
        assert text in result.output
    bad = CliRunner().invoke(app, ["trajectory", "show", str(path), "--index", "3"])
    assert bad.exit_code == 2 and "out of range" in bad.output


def _show(*args: object):
    import typer

    from ark.cli.trajectory_cmd import register

    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, ["trajectory", "show", *(str(a) for a in args)], env={"COLUMNS": "200"})
    result.text = " ".join(result.output.split())
    return result


def test_trajectory_show_rejects_a_results_file_and_names_the_right_one(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"id": "a", "ranked": ["D:1", "D:2"], "scores": [2.0, 1.0]}) + "\n")
    result = _show(results)
    assert result.exit_code == 2, result.output
    assert "not a retrieval record" in result.text and "trajectories.jsonl" in result.text
    assert not isinstance(result.exception, AttributeError)


@pytest.mark.parametrize("option", [("--top", "-2"), ("--top", "0"), ("--observation-chars", "-5"),
                                    ("--index", "-1")])
def test_trajectory_show_rejects_out_of_range_numbers(tmp_path, option):
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"question": "q", "agents": [], "ranked": []}) + "\n")
    result = _show(path, *option)
    assert result.exit_code == 2 and option[0] in result.text


def test_append_after_a_torn_line_keeps_every_complete_record(tmp_path):
    from ark.storage.jsonl import append_jsonl

    path = tmp_path / "runs.jsonl"
    append_jsonl(path, [{"question": "q1"}])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"question": "q2", "ran')  # a writer killed mid-line
    assert read_jsonl(path) == [{"question": "q1"}]  # the torn tail is skipped when reading
    append_jsonl(path, [{"question": "q3"}])
    assert read_jsonl(path) == [{"question": "q1"}, {"question": "q3"}]
    assert path.read_text(encoding="utf-8").endswith('{"question": "q3"}\n')


def test_read_jsonl_still_reports_damage_before_the_last_line(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"question": "q1"}\n{broken\n{"question": "q3"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        read_jsonl(path)


def test_on_step_sees_each_step_as_it_is_recorded(openai_server, graph, index, tmp_path):
    """A live view gets every step of every agent while the agents run, in order, before the retrieval ends."""
    openai_server.responder = by_agent(FULL_SCRIPT)
    seen = []

    async def on_step(trajectory, step):
        seen.append((trajectory.agent_index, step.index, len(trajectory.steps), trajectory.finished,
                     [c.name for c in step.tool_calls]))

    result = ARK(graph, llm=client(openai_server, tmp_path), index=index, n_agents=1, on_step=on_step).retrieve("q")
    assert [s[1] for s in seen] == [0, 1, 2, 3]
    assert all(count == position + 1 for _, position, count, _, _ in seen)  # called as each step lands
    assert not any(s[3] for s in seen) and seen[0][4] == ["search_in_graph"]  # before the trajectory ended
    assert result.trajectories[0].stop_reason == "finish"
