"""Records of tool-using runs: one :class:`Trajectory` per agent and one :class:`Retrieval` per question.

``Retrieval.to_dict()`` is the JSONL record (question, config, policy, per agent the full OpenAI-format history,
tool schemas, steps with raw tool-call arguments, observations and their structured results, wall time and token
usage, the answer; the fused ranking). ``to_reference_format()`` gives the ARK authors' per-question JSON and
``to_sft_samples()`` distillation samples. The conversation is typed records (:mod:`ark.llm.messages`), written as
the model saw them (``to_openai``): the typed result a tool message holds in memory is written once, dumped, in
its :class:`ToolCallRecord`, and given back (as that dict) to the tool message when a file is read.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

from ark.llm.messages import Message, SystemMessage, ToolMessage, as_message
from ark.llm.policy import Usage


@dataclass
class ToolCallRecord:
    """One tool call as the model sent it, and how it went."""

    id: str
    name: str
    arguments: str  # raw JSON string exactly as sent (arguments refused as too long: cut, see tools.kept_arguments)
    parsed_ok: bool
    ok: bool = True
    error: str | None = None
    node_indices: list[int] = field(default_factory=list)
    result: dict[str, Any] | None = None  # the tool's structured result (None in records written before it existed)


def _call_dict(call: ToolCallRecord) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments, "parsed_ok": call.parsed_ok, "ok": call.ok,
            "error": call.error, "node_indices": _copied(call.node_indices), "result": _copied(call.result)}


def _copied(value: Any) -> Any:
    """``value`` as ``dataclasses.asdict`` copies a field: new dicts, lists and tuples at every level, dataclasses
    as dicts, other leaves (the JSON scalars a record holds) shared rather than deep-copied."""
    if isinstance(value, dict):
        return {_copied(k): _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, tuple):
        items = [_copied(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


@dataclass
class StepRecord:
    """One model turn and the execution of its tool calls."""

    index: int
    tool_calls: list[ToolCallRecord]
    observations: list[str]
    wall_s: float
    llm_s: float
    usage: Usage
    cached: bool = False
    content: str | None = None  # assistant text, if any
    corrective: str | None = None  # the user message sent when the turn had no tool call

    def to_dict(self) -> dict[str, Any]:
        # What dataclasses.asdict gives (fresh containers all the way down), written out: asdict's generic
        # recursion was a tenth of an offline question's run.
        return {
            "index": self.index, "tool_calls": [_call_dict(call) for call in self.tool_calls],
            "observations": list(self.observations), "wall_s": self.wall_s, "llm_s": self.llm_s,
            "usage": self.usage.to_dict(), "cached": self.cached, "content": self.content,
            "corrective": self.corrective,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], position: int = 0) -> StepRecord:
        """A step of :meth:`to_dict` from any version of the files; a hand-written step may leave out what it
        does not use (its index defaults to ``position``, times to 0)."""
        values = {"index": position, "observations": [], "wall_s": 0.0, "llm_s": 0.0, **data}
        values["tool_calls"] = [_call_from_dict(c) for c in data.get("tool_calls") or []]
        values["usage"] = Usage(**data.get("usage") or {})
        return cls(**values)


def _call_from_dict(data: dict[str, Any]) -> ToolCallRecord:
    return ToolCallRecord(**{"id": "", "name": "", "arguments": "", "parsed_ok": True, **data})


@dataclass
class Trajectory:
    """One agent's exploration of one question."""

    question: str
    agent_index: int = 0
    policy: str = ""
    messages: list[Message] = field(default_factory=list)  # the conversation, typed (see ark.llm.messages)
    tools: list[dict] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    answer: list[int] = field(default_factory=list)
    answer_ids: list[str] = field(default_factory=list)
    reasoning: dict[int, str] = field(default_factory=dict)
    finished: bool = False
    stop_reason: str = ""  # finish | max_steps | error
    error: str | None = None
    telemetry: dict[str, int] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    wall_s: float = 0.0
    confidence: str | None = None  # high | medium | low, as the agent's finish call stated it (None: not stated)
    confidence_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys of a plugin's dict trajectory, written back as given

    def __post_init__(self) -> None:
        # Wire dicts given by a caller (plugins, older code) become records; records stay as they are.
        self.messages = [as_message(m) for m in self.messages]

    def tool_calls(self) -> list[ToolCallRecord]:
        """Every tool call of the trajectory, in order."""
        return [call for step in self.steps for call in step.tool_calls]

    @property
    def step_times(self) -> list[float]:
        """Cumulative wall time after each step (the reference code's ``step_times``)."""
        total, out = 0.0, []
        for step in self.steps:
            total += step.wall_s
            out.append(round(total, 6))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent_index": self.agent_index, "question": self.question, "policy": self.policy,
            "finished": self.finished, "stop_reason": self.stop_reason, "error": self.error,
            "answer": self.answer, "answer_ids": self.answer_ids,
            "reasoning": {str(k): v for k, v in self.reasoning.items()},
            "telemetry": self.telemetry, "usage": self.usage.to_dict(), "wall_s": self.wall_s,
            "confidence": self.confidence, "confidence_reason": self.confidence_reason,
            "steps": [s.to_dict() for s in self.steps], "messages": [m.to_openai() for m in self.messages],
            "tools": self.tools, **self.extra,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        """A trajectory of :meth:`to_dict` from any version of the files; keys it does not know go to ``extra``."""
        known = {f.name for f in fields(cls)} - {"extra"}
        values = {key: value for key, value in data.items() if key in known}
        values["extra"] = {key: value for key, value in data.items() if key not in known}
        values.setdefault("question", "")
        values["steps"] = [StepRecord.from_dict(s, k) for k, s in enumerate(data.get("steps") or [])]
        values["usage"] = Usage(**data.get("usage") or {})
        values["reasoning"] = {int(k): v for k, v in (data.get("reasoning") or {}).items()}
        trajectory = cls(**values)
        trajectory.link_results()
        return trajectory

    def link_results(self) -> None:
        """Give each tool message without a result the result its call's record keeps (a trajectory read from a
        file: the files write each result once, in the call's record; read back, it is that dict)."""
        results = {call.id: call.result for call in self.tool_calls()}
        for message in self.messages:
            if isinstance(message, ToolMessage) and message.result is None:
                message.result = results.get(message.tool_call_id)

    def to_sft_sample(self, include_system: bool = False) -> dict[str, str | list[dict]]:
        """``{"messages": the history, "tools": schemas as a JSON string}``; without the system prompt by default
        (the reference format), with it when ``include_system`` (the context the loop gives at inference)."""
        messages = [m.to_openai() for m in self.messages if include_system or not isinstance(m, SystemMessage)]
        return {"messages": messages, "tools": json.dumps(self.tools, ensure_ascii=False)}


@dataclass(frozen=True)
class RankedNode:
    """One node of the fused ranking."""

    index: int
    node_id: str
    name: str
    type: str
    votes: int
    score: float
    first_position: int
    tie_group: int = 0  # 1-based rank group: nodes sharing one are tied, the graph does not distinguish them


@dataclass
class Retrieval:
    """The result of one question: the fused ranking and every agent's trajectory."""

    question: str
    ranked: list[RankedNode]
    trajectories: list[Trajectory]
    config: dict[str, Any] = field(default_factory=dict)
    policy: str = ""
    wall_s: float = 0.0
    graph: str = ""
    confidence: str | None = None  # high | medium | low (None: no agent stated one)
    confidence_reason: str | None = None  # one line: why (e.g. the relation the graph lacks)

    @property
    def fused_ids(self) -> list[int]:
        """Node indices of the fused ranking, best first."""
        return [node.index for node in self.ranked]

    def votes(self) -> dict[int, int]:
        """Agent votes per ranked node index."""
        return {node.index: node.votes for node in self.ranked}

    def tie_groups(self) -> dict[int, int]:
        """The 1-based tie group of each ranked node that has one."""
        return {node.index: node.tie_group for node in self.ranked if node.tie_group}

    def total_tokens(self) -> int:
        return self.usage.total_tokens

    def to_record(self) -> dict[str, Any]:
        """The question's record without its agents (they travel apart, as ``MethodOutput.trajectories``)."""
        return self.to_dict(agents=False)

    @property
    def usage(self) -> Usage:
        total = Usage()
        for trajectory in self.trajectories:
            total = total + trajectory.usage
        return total

    @property
    def failed_agents(self) -> list[Trajectory]:
        """The trajectories whose policy failed (their ``error`` is set)."""
        return [t for t in self.trajectories if t.error]

    @property
    def partial(self) -> bool:
        """Whether some agents failed and the ranking fuses only the others (``allow_partial``)."""
        return bool(self.failed_agents)

    def partial_note(self) -> str | None:
        """``"1 of 3 agents failed: ..."`` for a partial retrieval, else None."""
        failed = self.failed_agents
        if not failed:
            return None
        return f"{len(failed)} of {len(self.trajectories)} agents failed: agent {failed[0].agent_index}: " \
               f"{failed[0].error}"

    def to_dict(self, agents: bool = True) -> dict[str, Any]:
        """The JSONL record of this question (``partial`` only when some agents failed); without the ``agents``
        list when ``agents`` is false (callers that keep the trajectories apart)."""
        record = {
            "question": self.question, "graph": self.graph, "policy": self.policy, "config": self.config,
            "wall_s": self.wall_s, "usage": self.usage.to_dict(), "fused_ids": self.fused_ids,
            "confidence": self.confidence, "confidence_reason": self.confidence_reason,
            "ranked": [asdict(node) for node in self.ranked],
        }
        if agents:
            record["agents"] = [t.to_dict() for t in self.trajectories]
        if self.partial:
            record["partial"] = self.partial_note()
        return record

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Retrieval:
        """A record of :meth:`to_dict`, packed or not (see :mod:`ark.runtime.trajectory_file`)."""
        from .trajectory_file import unpack_record

        data = unpack_record(data)
        return cls(question=data["question"], ranked=[RankedNode(**n) for n in data.get("ranked", [])],
                   trajectories=[Trajectory.from_dict(t) for t in data.get("agents", [])],
                   config=data.get("config", {}), policy=data.get("policy", ""), wall_s=data.get("wall_s", 0.0),
                   graph=data.get("graph", ""), confidence=data.get("confidence"),
                   confidence_reason=data.get("confidence_reason"))

    def to_reference_format(self) -> dict[str, Any]:
        """The authors' per-question JSON: question, fused answer indices and per-agent histories."""
        return {
            "question": self.question,
            "answer_indices": self.fused_ids,
            "trajectories": [
                {"message_history": [m.to_openai() for m in t.messages], "agent_answer_indices": t.answer,
                 "steps": len(t.steps),
                 "step_times": t.step_times}
                for t in self.trajectories
            ],
        }

    def to_sft_samples(self, include_system: bool = False) -> list[dict[str, Any]]:
        """One distillation sample per trajectory (see :meth:`Trajectory.to_sft_sample`)."""
        return [t.to_sft_sample(include_system) for t in self.trajectories]
