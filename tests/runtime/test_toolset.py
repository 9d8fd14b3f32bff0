"""ToolSet's per-trajectory telemetry: repeated calls, the invalid-call rule, a family's own telemetry record, and
the toolbox base every method's toolbox builds on."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from pydantic import BaseModel

from ark.runtime.tools import (
    ARGUMENTS_TOO_DEEP,
    ARGUMENTS_TOO_LONG,
    BUDGET,
    INVALID_ARGUMENTS,
    INVALID_CALL_ERRORS,
    INVALID_JSON,
    MAX_ARGUMENT_CHARS,
    UNKNOWN_NAME,
    UNKNOWN_NODE,
    UNKNOWN_TOOL,
    BoundTool,
    CallTelemetry,
    TelemetryRecord,
    ToolboxBase,
    ToolResult,
    ToolSet,
    ToolSpec,
)


class LookArgs(BaseModel):
    query: str
    size: int = 5
    refuse: str | None = None  # the error kind the handler answers with (a test's switch)


def look(args: LookArgs) -> ToolResult:
    if args.refuse is not None:
        return ToolResult.failure(f"refused: {args.refuse}", args.refuse)
    return ToolResult(f"looked for {args.query}")


LOOK = ToolSpec("look", "Look something up.", LookArgs, example='{"query": "seizure"}')


def tools(**options) -> ToolSet[CallTelemetry]:
    return ToolSet([BoundTool(LOOK, look)], **options)


def test_the_same_call_again_is_a_repeat_in_any_key_order_and_either_form():
    toolset = tools()
    toolset.execute("look", '{"query": "seizure", "size": 5}')
    toolset.execute("look", '{"size": 5, "query": "seizure"}')
    toolset.execute("look", {"query": "seizure", "size": 5})
    toolset.execute("look", '{"query": "seizure", "size": 6}')
    assert toolset.telemetry.repeated_calls == 2 and toolset.telemetry.invalid_calls == 0


def test_unreadable_arguments_repeat_by_their_text_and_refused_ones_before_reading_never():
    toolset = tools()
    toolset.execute("look", '{"query": "sei')
    toolset.execute("look", '{"query": "sei')
    huge = json.dumps({"query": "x" * MAX_ARGUMENT_CHARS})
    toolset.execute("look", huge)
    toolset.execute("look", huge)  # refused before parsing: not even remembered
    toolset.execute("teleport", "{}")
    toolset.execute("teleport", "{}")  # no such tool: nothing to repeat
    assert toolset.telemetry.repeated_calls == 1 and toolset.telemetry.invalid_calls == 6


@pytest.mark.parametrize(("arguments", "kind"), [
    ('{"query": "sei', INVALID_JSON),
    ("[1, 2]", INVALID_JSON),
    ("{}", INVALID_ARGUMENTS),
    ('{"query": 3, "size": "many"}', INVALID_ARGUMENTS),
    (json.dumps({"query": "word " * 1000}), ARGUMENTS_TOO_LONG),
    ("[" * 100 + "]" * 100, ARGUMENTS_TOO_DEEP),
    ('{"query": "q", "refuse": "unknown_node"}', UNKNOWN_NODE),
    ('{"query": "q", "refuse": "unknown_name"}', UNKNOWN_NAME),
    ('{"query": "q", "refuse": "invalid_arguments"}', INVALID_ARGUMENTS),
])
def test_a_call_refused_for_what_it_asked_is_invalid(arguments, kind):
    toolset = tools()
    result = toolset.execute("look", arguments)
    assert not result.ok and result.error == kind and kind in INVALID_CALL_ERRORS
    assert toolset.telemetry.invalid_calls == 1


@pytest.mark.parametrize("kind", [BUDGET, "cypher", "timeout", "rejected", "finished"])
def test_a_well_formed_call_that_fails_while_it_runs_is_not_invalid(kind):
    toolset = tools()
    result = toolset.execute("look", json.dumps({"query": "q", "refuse": kind}))
    assert not result.ok and result.error == kind
    assert toolset.telemetry.invalid_calls == 0


def test_an_unknown_tool_is_invalid_and_lists_the_tools():
    toolset = tools()
    result = toolset.execute("teleport", "{}")
    assert result.error == UNKNOWN_TOOL and "Available tools: look." in result.text
    assert toolset.telemetry.invalid_calls == 1


@dataclass
class FamilyTelemetry(TelemetryRecord):
    looks: int = 0
    repeated_calls: int = 0
    invalid_calls: int = 0
    refusals: int = 0


def test_a_family_telemetry_record_keeps_its_field_order_and_gets_the_call_counts():
    telemetry = FamilyTelemetry()
    toolset = ToolSet([BoundTool(LOOK, look)], telemetry)
    toolset.execute("look", '{"query": "a"}')
    toolset.execute("look", '{"query": "a"}')
    toolset.execute("look", "{}")
    assert toolset.telemetry is telemetry
    assert json.dumps(telemetry.to_dict()) == ('{"looks": 0, "repeated_calls": 1, "invalid_calls": 1, '
                                               '"refusals": 0}')


def test_a_servers_tool_set_remembers_no_call():
    toolset = tools(per_trajectory=False)
    for _ in range(3):
        assert toolset.execute("look", '{"query": "a"}').ok
    assert toolset.telemetry.repeated_calls == 0 and not toolset._seen_calls
    assert toolset.execute("look", "{}").error == INVALID_ARGUMENTS and toolset.telemetry.invalid_calls == 1


class CountingToolbox(ToolboxBase[FamilyTelemetry]):
    """A toolbox as a method writes one: its tools bound to itself, and its domain state."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.tools = ToolSet([BoundTool(LOOK, self.look)], FamilyTelemetry())

    def look(self, args: LookArgs) -> ToolResult:
        self.telemetry.looks += 1
        self.seen.append(args.query)
        return ToolResult(args.query)


def test_a_toolbox_is_its_tools_and_its_state():
    box = CountingToolbox()
    assert box.names == ["look"] and not box.finished
    assert [s["function"]["name"] for s in box.openai_tools()] == ["look"]
    assert [s["name"] for s in box.mcp_tools()] == ["look"]
    box.execute("look", '{"query": "a"}')
    box.execute("look", '{"query": "a"}')
    box.execute("look", '{"query": "a", "size": "x"}')
    assert box.seen == ["a", "a"]
    assert box.telemetry.to_dict() == {"looks": 2, "repeated_calls": 1, "invalid_calls": 1, "refusals": 0}
