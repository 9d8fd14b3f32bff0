"""How closely a student's trajectories follow its teacher's: exact tool-call sequences, valid calls, tool mix.

Everything works on retrieval records (one JSONL line of an ARK run: ``Retrieval.to_dict()`` or an eval run's
``trajectories.jsonl`` line), read through :func:`ark.training.datasets.record_trajectories`, so a report compares
two run folders without re-running anything.

Two reproduction figures: :func:`reproduction_rate` asks, per question, whether every agent repeats the teacher's
agent with the same index (strict; right for one greedy agent or a scripted teacher replayed); and
:func:`trajectory_reproduction_rate` asks, per student trajectory, whether it repeats *any* of the teacher's
trajectories on that question (the fair figure when the teacher sampled several different trajectories per question
and a greedy student can only follow one of them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ....runtime.records import Trajectory
from ....training.datasets import record_trajectories

Record = Mapping[str, object]  # a retrieval record, as read from a file


def tool_call_sequence(trajectory: Trajectory | Mapping[str, object]) -> list[tuple[str, str]]:
    """The ``(tool name, raw JSON arguments)`` of every call of one trajectory (or its ``to_dict()``), in order."""
    if not isinstance(trajectory, Trajectory):
        trajectory = Trajectory.from_dict(dict(trajectory))
    return [(call.name, call.arguments) for step in trajectory.steps for call in step.tool_calls]


def _question_key(record: Record) -> str:
    return str(record["question"])


def _by_question(records: Sequence[Record]) -> dict[str, list[Trajectory]]:
    """Trajectories by question text (records of one question, e.g. two query ids with the same text, pooled)."""
    out: dict[str, list[Trajectory]] = {}
    for record in records:
        out.setdefault(_question_key(record), []).extend(record_trajectories(record))
    return out


def reproduction_rate(teacher: Sequence[Record], student: Sequence[Record]) -> float:
    """Share of the teacher's questions whose student trajectories repeat the teacher's exactly, agent by agent.

    Records are matched by question text; a question the student lacks counts as not reproduced.
    """
    if not teacher:
        raise ValueError("no teacher records to compare with")
    students, teachers = _by_question(student), _by_question(teacher)
    same = 0
    for question, taught in teachers.items():
        learnt = students.get(question)
        if learnt is None or len(learnt) != len(taught):
            continue
        same += all(tool_call_sequence(a) == tool_call_sequence(b) for a, b in zip(taught, learnt, strict=True))
    return same / len(teachers)


def trajectory_reproduction_rate(teacher: Sequence[Record], student: Sequence[Record]) -> tuple[float, int]:
    """``(share, n)``: of the ``n`` student trajectories on questions the teacher answered, the share whose tool
    calls equal those of one of the teacher's trajectories on the same question."""
    teachers = _by_question(teacher)
    matched = total = 0
    for question, learnt in _by_question(student).items():
        taught = teachers.get(question)
        if taught is None:
            continue
        sequences = [tool_call_sequence(t) for t in taught]
        for trajectory in learnt:
            total += 1
            matched += tool_call_sequence(trajectory) in sequences
    return (matched / total if total else 0.0), total


def valid_call_rate(records: Sequence[Record]) -> float:
    """Share of the model's attempts at a tool call that worked: calls whose arguments parsed and whose execution
    succeeded, over all calls plus the turns that made no call and were sent a correction (1.0 when there are none).
    """
    attempts = valid = 0
    for record in records:
        for trajectory in record_trajectories(record):
            for step in trajectory.steps:
                attempts += len(step.tool_calls) + (step.corrective is not None)
                valid += sum(bool(call.parsed_ok and call.ok) for call in step.tool_calls)
    return valid / attempts if attempts else 1.0


def tool_call_mix(records: Sequence[Record]) -> Counter[str]:
    """Tool calls per tool name over all trajectories of ``records``."""
    counts: Counter[str] = Counter()
    for record in records:
        for trajectory in record_trajectories(record):
            counts.update(name for name, _ in tool_call_sequence(trajectory))
    return counts
