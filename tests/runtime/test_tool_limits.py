"""Tool arguments over the documented sizes are refused with an observation naming the limit, before any work."""

from __future__ import annotations

import json

from pydantic import BaseModel

from ark.runtime.tools import (
    ARGUMENTS_TOO_LONG,
    MAX_ARGUMENT_CHARS,
    MAX_TEXT_ARGUMENT_CHARS,
    BoundTool,
    ToolResult,
    ToolSet,
    ToolSpec,
    dumped,
)


class EchoArgs(BaseModel):
    query: str
    notes: list[dict] = []


def echo_tools(calls: list) -> ToolSet:
    spec = ToolSpec("echo", "Echo the query.", EchoArgs, example='{"query": "a few words"}')

    def handler(args: EchoArgs) -> ToolResult:
        calls.append(args)
        return ToolResult(args.query)

    return ToolSet([BoundTool(spec, handler)])


def test_a_huge_argument_string_is_refused_before_it_is_parsed():
    calls: list = []
    tools = echo_tools(calls)
    raw = json.dumps({"query": "x" * 14_000_000})
    result = tools.execute("echo", raw)
    assert not result.ok and result.error == ARGUMENTS_TOO_LONG and calls == []
    assert f"the limit is {MAX_ARGUMENT_CHARS:,} characters" in result.text and "14,000,013" in result.text
    assert dumped(result.data) == {"error": ARGUMENTS_TOO_LONG, "size": len(raw), "limit": MAX_ARGUMENT_CHARS}


def test_a_long_text_value_is_refused_naming_the_argument_and_the_limit():
    calls: list = []
    tools = echo_tools(calls)
    result = tools.execute("echo", json.dumps({"query": "marfan syndrome " * 1000}))
    assert result.error == ARGUMENTS_TOO_LONG and calls == []
    assert result.text == (f"The query argument of echo is 16,000 characters long; text arguments are limited to "
                           f"{MAX_TEXT_ARGUMENT_CHARS:,} characters. Send a shorter query (a few keywords).")
    nested = tools.execute("echo", {"query": "ok", "notes": [{"why": "y" * 2001}]})
    assert nested.data.argument == "notes.0.why" and calls == []


def test_arguments_at_the_limits_still_run():
    calls: list = []
    tools = echo_tools(calls)
    assert tools.execute("echo", json.dumps({"query": "q" * MAX_TEXT_ARGUMENT_CHARS})).ok
    assert len(calls) == 1


class SearchRecorder:
    """A text index that notes every query it is asked to search, then searches ``index``."""

    def __init__(self, index, queries: list) -> None:
        self.index, self.queries = index, queries

    def search(self, query, k, node_types=None):
        self.queries.append(query)
        return self.index.search(query, k, node_types)

    def score(self, query, candidates):
        return self.index.score(query, candidates)


def test_the_ark_search_tool_answers_the_issue_example_with_the_limit_not_an_empty_cut(graph, index):
    from ark.methods.ark.tools import Toolbox

    box = Toolbox(graph, index)
    searched: list = []
    box.index = SearchRecorder(index, searched)  # the index must never see such a query
    result = box.execute("search_in_graph", json.dumps({"query": "marfan syndrome " * 1000}))
    assert "limited to 2,000 characters" in result.text and "Output cut" not in result.text
    huge = box.execute("search_in_graph", json.dumps({"query": "marfan " * 2_000_000}))
    assert "the limit is 50,000 characters" in huge.text
    assert searched == [] and box.telemetry.invalid_calls == 2 and box.telemetry.global_calls == 0


class NoArgs(BaseModel):
    pass


class TwoTurns:
    """A scripted policy: a call with 6 MB of arguments, then ``finish``; it keeps every history it was sent."""

    name = "scripted"
    max_tool_calls_per_turn = 8

    def __init__(self, huge: str) -> None:
        self.huge, self.seen = huge, []

    async def next_message(self, messages, tools, *, agent_index=0, tool_choice="required"):
        from ark.llm.policy import PolicyReply

        self.seen.append(json.dumps(messages, default=str))
        name, arguments = ("echo", self.huge) if len(self.seen) == 1 else ("finish", "{}")
        return PolicyReply({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{len(self.seen)}", "type": "function", "function": {"name": name, "arguments": arguments}}]})

    async def aclose(self) -> None:
        pass


def test_a_refused_huge_argument_is_kept_cut_in_the_trajectory_and_the_history():
    """36 MB of ``--json`` for one question came from storing such a call whole in the record and in the history."""
    import asyncio

    from ark.runtime.loop import run_tool_loop
    from ark.runtime.records import Trajectory
    box = echo_tools([])
    box.tools["finish"] = BoundTool(ToolSpec("finish", "End.", NoArgs), lambda _args: ToolResult("done"))

    class Executor:
        finished = False

        def execute(self, name, arguments):
            result = box.execute(name, arguments)
            self.finished = self.finished or name == "finish"
            return result

    huge = json.dumps({"query": "marfan " * 898_779})  # 6,291,466 characters
    policy = TwoTurns(huge)
    trajectory = Trajectory(question="q", messages=[{"role": "user", "content": "q"}], tools=box.openai_schemas())
    asyncio.run(run_tool_loop(trajectory, policy, Executor(), max_steps=3))
    record = json.dumps(trajectory.to_dict())
    assert trajectory.finished and len(record) < 20_000, len(record)
    kept = trajectory.steps[0].tool_calls[0].arguments
    assert kept.startswith(huge[:2_000]) and kept[2_000] == "…"  # the stated size
    assert kept.endswith(f"…[cut: {len(huge):,} characters; refused: over the {MAX_ARGUMENT_CHARS:,}-character "
                         "limit]"), kept[-120:]
    assert trajectory.messages[1].tool_calls[0].arguments == kept  # the stored conversation
    assert len(policy.seen[1]) < 20_000  # and what the model is sent on the next turn
    assert trajectory.steps[0].tool_calls[0].error == ARGUMENTS_TOO_LONG
