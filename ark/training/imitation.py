"""How closely a student's trajectories follow its teacher's: exact tool-call sequences and valid-call rates.

Both work on retrieval records (``Retrieval.to_dict()``, one JSONL line of an ARK run), so a report can compare
two run folders without re-running anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def tool_call_sequence(agent: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``(tool name, raw JSON arguments)`` of every call of one agent's trajectory, in order."""
    return [(call["name"], call["arguments"]) for step in agent.get("steps", []) for call in step.get("tool_calls", [])]


def reproduction_rate(teacher: Sequence[Mapping[str, Any]], student: Sequence[Mapping[str, Any]]) -> float:
    """Share of questions whose student trajectories repeat the teacher's exactly, agent by agent.

    Records are matched by question text; a question the student lacks counts as not reproduced.
    """
    if not teacher:
        raise ValueError("no teacher records to compare with")
    by_question = {record["question"]: record for record in student}
    same = 0
    for record in teacher:
        other = by_question.get(record["question"])
        if other is None or len(other.get("agents", [])) != len(record.get("agents", [])):
            continue
        same += all(tool_call_sequence(a) == tool_call_sequence(b)
                    for a, b in zip(record["agents"], other["agents"], strict=True))
    return same / len(teacher)


def valid_call_rate(records: Sequence[Mapping[str, Any]]) -> float:
    """Share of tool calls whose arguments parsed and whose execution succeeded (1.0 when there are no calls)."""
    total = valid = 0
    for record in records:
        for agent in record.get("agents", []):
            for step in agent.get("steps", []):
                for call in step.get("tool_calls", []):
                    total += 1
                    valid += bool(call.get("parsed_ok", True) and call.get("ok", True))
    return valid / total if total else 1.0
