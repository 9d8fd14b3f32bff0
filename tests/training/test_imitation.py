"""Comparing a student's trajectories with its teacher's."""

from __future__ import annotations

import pytest

from ark.training.imitation import reproduction_rate, tool_call_sequence, valid_call_rate


def _record(question, calls):
    steps = [{"tool_calls": [{"name": n, "arguments": a, "parsed_ok": ok, "ok": ok} for n, a, ok in calls]}]
    return {"question": question, "agents": [{"steps": steps}]}


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
