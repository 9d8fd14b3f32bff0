"""Comparing a student's trajectories with its teacher's."""

from __future__ import annotations

import pytest

from ark.llm.policy import Usage
from ark.methods.ark.distill.imitation import (
    reproduction_rate,
    tool_call_mix,
    tool_call_sequence,
    trajectory_reproduction_rate,
    valid_call_rate,
)
from ark.runtime.records import StepRecord, ToolCallRecord, Trajectory


def _step(index, calls, corrective=None):
    records = [ToolCallRecord.of(f"c{index}{n}", name, arguments, ok, ok) for n, (name, arguments, ok) in
               enumerate(calls)]
    return StepRecord.of(index, records, ["seen"] * len(records), 0.0, 0.0, Usage(), corrective=corrective)


def _record(question, calls):
    """A retrieval record with one agent that made ``calls`` (name, JSON arguments, ok) in one turn."""
    return {"question": question, "agents": [Trajectory(question, steps=[_step(0, calls)]).to_dict()]}


def test_reproduction_needs_the_exact_calls_of_every_agent():
    teacher = [_record("a", [("search", '{"q": 1}', True)]), _record("b", [("finish", "{}", True)])]
    same = [_record("b", [("finish", "{}", True)]), _record("a", [("search", '{"q": 1}', True)])]
    assert reproduction_rate(teacher, same) == 1.0
    spaced = [_record("a", [("search", '{"q":1}', True)]), _record("b", [("finish", "{}", True)])]
    assert reproduction_rate(teacher, spaced) == 0.5  # raw arguments must match exactly
    assert reproduction_rate(teacher, same[:1]) == 0.5  # a missing question is not reproduced
    assert tool_call_sequence(teacher[0]["agents"][0]) == [("search", '{"q": 1}')]
    with pytest.raises(ValueError):
        reproduction_rate([], same)


def test_valid_call_rate_counts_parse_and_execution_failures():
    records = [_record("a", [("search", "{", False), ("finish", "{}", True)])]
    assert valid_call_rate(records) == 0.5 and valid_call_rate([]) == 1.0


def test_a_turn_without_a_call_counts_as_a_failed_attempt():
    record = _record("a", [("finish", "{}", True)])
    record["agents"][0]["steps"].insert(0, _step(1, [], corrective="Call a tool.").to_dict())
    assert valid_call_rate([record]) == 0.5


def test_trajectory_reproduction_matches_any_teacher_trajectory_of_the_question():
    teacher = _record("a", [("search", '{"q": 1}', True)])
    teacher["agents"].append(_record("a", [("search", '{"q": 2}', True)])["agents"][0])
    student = _record("a", [("search", '{"q": 2}', True)])
    assert trajectory_reproduction_rate([teacher], [student]) == (1.0, 1)
    assert reproduction_rate([teacher], [student]) == 0.0  # agent by agent it is not the same question run
    other = _record("a", [("search", '{"q": 3}', True)])
    unknown = _record("b", [("search", '{"q": 1}', True)])
    assert trajectory_reproduction_rate([teacher], [student, other, unknown]) == (0.5, 2)
    assert tool_call_mix([teacher, unknown]) == {"search": 3}
