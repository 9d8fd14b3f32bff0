"""Records of tool-using runs: one :class:`Trajectory` per agent and one :class:`Retrieval` per question.

``Retrieval.to_dict()`` is the JSONL record (question, config, policy, per agent the full OpenAI-format history,
tool schemas, steps with raw tool-call arguments, observations and their structured results, wall time and token
usage, the answer; the fused ranking). ``to_reference_format()`` gives the ARK authors' per-question JSON and
``to_sft_samples()`` distillation samples.

The conversation is stored once: ``Trajectory.messages`` (typed records, :mod:`ark.llm.messages`) is the history the
model saw, and each :class:`StepRecord` holds its turn's messages (the assistant message, its tool messages, the
corrective user message) and each :class:`ToolCallRecord` its call and answer, not copies; what a step adds is its
own (timing, usage, whether each call parsed and succeeded). The files keep their format: a step's dict still
writes the observations, content, corrective and each call's id, name, arguments and result (dumped from the tool
message's typed result), and reading a file, a step takes its trajectory's messages when they say the same (its own
copies otherwise: hand-written steps, steps of a file whose messages were cut).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import TypeVar

from pydantic import BaseModel

from ark.llm.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage, as_message
from ark.llm.policy import Usage

from .tools import ToolData, dumped

T = TypeVar("T")


@dataclass
class ToolCallRecord:
    """One tool call as the model sent it, and how it went. The call itself (id, name, raw arguments) is the
    assistant message's :class:`ToolCall` and its observation and result the answering :class:`ToolMessage`: the
    record holds them, not copies, so the conversation is stored once."""

    call: ToolCall  # arguments refused as too long: cut, see tools.kept_arguments
    parsed_ok: bool
    ok: bool = True
    error: str | None = None
    node_indices: list[int] = field(default_factory=list)
    answer: ToolMessage | None = None  # the tool message answering the call (None: a hand-written record)

    @classmethod
    def of(cls, id: str, name: str, arguments: str, parsed_ok: bool, ok: bool = True, error: str | None = None,
           node_indices: list[int] | None = None, result: ToolData | None = None) -> ToolCallRecord:
        """A record with its own call and answer (a record read from a file whose messages do not hold them, a
        hand-written one); ``result`` the call's structured result."""
        answer = ToolMessage(id, "", result) if result is not None else None
        return cls(ToolCall(id, name, arguments), parsed_ok, ok, error, list(node_indices or []), answer)

    @property
    def id(self) -> str:
        return self.call.id

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def arguments(self) -> str:
        return self.call.arguments

    @property
    def data(self) -> ToolData | None:
        """The call's structured result as the tool made it (its result model; a dict when read from a file)."""
        result = self.answer.result if self.answer is not None else None
        return result if isinstance(result, BaseModel | Mapping) else None

    @property
    def result(self) -> dict[str, object] | None:
        """The structured result as it is written (None in records written before it existed)."""
        return dumped(self.data)


def _call_dict(call: ToolCallRecord) -> dict[str, object]:
    data = call.data
    result = data.model_dump(exclude_unset=True) if isinstance(data, BaseModel) else _copied(data)
    return {"id": call.id, "name": call.name, "arguments": call.arguments, "parsed_ok": call.parsed_ok, "ok": call.ok,
            "error": call.error, "node_indices": list(call.node_indices), "result": result}


def _copied(value: object) -> object:
    """``value`` as ``dataclasses.asdict`` copies a field: new dicts, lists and tuples at every level, dataclasses
    as dicts, other leaves (the JSON scalars a record holds) shared rather than deep-copied."""
    if isinstance(value, dict):
        return {_copied(k): _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, tuple):
        items = [_copied(v) for v in value]
        named = getattr(type(value), "_make", None)  # a named tuple is made from its fields
        return named(items) if named is not None else type(value)(items)
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


@dataclass
class StepRecord:
    """One model turn and the execution of its tool calls: its timing and usage, and the turn's messages
    (``message``, the tool messages ``answers``, the ``corrective_message`` sent when the turn had no tool call)
    held, not copied: ``content``, ``observations`` and ``corrective`` are read from them."""

    index: int
    tool_calls: list[ToolCallRecord]
    wall_s: float
    llm_s: float
    usage: Usage
    cached: bool = False
    message: AssistantMessage = field(default_factory=AssistantMessage)
    answers: list[ToolMessage] = field(default_factory=list)
    corrective_message: UserMessage | None = None

    @classmethod
    def of(cls, index: int, tool_calls: list[ToolCallRecord], observations: list[str], wall_s: float, llm_s: float,
           usage: Usage, cached: bool = False, content: str | None = None,
           corrective: str | None = None) -> StepRecord:
        """A step with its own messages (one whose trajectory's messages do not hold it, a hand-written one): with
        one observation per call, each call's answer carries its observation (and keeps its result)."""
        if len(observations) == len(tool_calls):
            for call, text in zip(tool_calls, observations, strict=True):
                call.answer = call.answer or ToolMessage(call.id, "")
                call.answer.content = text
            answers = [call.answer for call in tool_calls if call.answer is not None]
        else:
            answers = [ToolMessage("", text) for text in observations]
        message = AssistantMessage(content, [call.call for call in tool_calls])
        return cls(index, tool_calls, wall_s, llm_s, usage, cached, message, answers,
                   UserMessage(corrective) if corrective is not None else None)

    @property
    def observations(self) -> list[str]:
        """What each call's observation said, in order (the tool messages' text)."""
        return [answer.content for answer in self.answers]

    @property
    def content(self) -> str | None:
        """The assistant text, if any."""
        return self.message.content

    @property
    def corrective(self) -> str | None:
        """The user message sent when the turn had no tool call."""
        return self.corrective_message.content if self.corrective_message is not None else None

    def to_dict(self) -> dict[str, object]:
        # What dataclasses.asdict gave when the step held its own copies (fresh containers all the way down),
        # written out: asdict's generic recursion was a tenth of an offline question's run.
        return {
            "index": self.index, "tool_calls": [_call_dict(call) for call in self.tool_calls],
            "observations": self.observations, "wall_s": self.wall_s, "llm_s": self.llm_s,
            "usage": self.usage.to_dict(), "cached": self.cached, "content": self.content,
            "corrective": self.corrective,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object], position: int = 0, turn: Turn | None = None) -> StepRecord:
        """A step of :meth:`to_dict` from any version of the files; a hand-written step may leave out what it
        does not use (its index defaults to ``position``, times to 0). With ``turn`` (the trajectory's messages of
        this step), the step holds those messages when they say what the step says (else its own copies)."""
        calls = [_call_from_dict(c) for c in _dicts(data.get("tool_calls"))]
        usage = Usage(**_counts(data.get("usage")))
        timing = {key: _number(data.get(key)) for key in ("wall_s", "llm_s")}
        index = _get(data, "index", int, position)
        cached = _get(data, "cached", bool, False)
        observations = [o for o in _get(data, "observations", list, []) if isinstance(o, str)]
        content, corrective = _text(data.get("content")), _text(data.get("corrective"))
        if turn is not None and turn.says(calls, observations, content, corrective):
            for call, answer, record in zip(turn.message.tool_calls, turn.answers, calls, strict=True):
                if answer.result is None and record.answer is not None:
                    answer.result = record.answer.result  # files write a result once, in the call's record
                record.call, record.answer = call, answer
            return cls(index, calls, timing["wall_s"], timing["llm_s"], usage, cached, turn.message, turn.answers,
                       turn.corrective)
        return cls.of(index, calls, observations, timing["wall_s"], timing["llm_s"], usage, cached, content,
                      corrective)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> float:
    """A time read from a file as written (an int stays an int); 0.0 when it is not a number."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _get(data: Mapping[str, object], key: str, kind: type[T], default: T) -> T:
    """``data[key]`` when it is a ``kind``, else ``default``."""
    value = data.get(key, default)
    return value if isinstance(value, kind) else default


def _dicts(value: object) -> list[Mapping[str, object]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _counts(value: object) -> dict[str, int]:
    return {str(k): v for k, v in value.items() if isinstance(v, int)} if isinstance(value, Mapping) else {}


def _call_from_dict(data: Mapping[str, object]) -> ToolCallRecord:
    nodes = data.get("node_indices")
    result = data.get("result")
    error = data.get("error")
    return ToolCallRecord.of(str(data.get("id") or ""), str(data.get("name") or ""), str(data.get("arguments") or ""),
                             bool(data.get("parsed_ok", True)), bool(data.get("ok", True)),
                             error if isinstance(error, str) else None,
                             [n for n in nodes if isinstance(n, int)] if isinstance(nodes, list) else [],
                             dict(result) if isinstance(result, Mapping) else None)


@dataclass
class Turn:
    """One step's messages in a conversation: the assistant message, the tool messages after it (its calls'
    answers) and the user message after those (the corrective, when the turn made no call)."""

    message: AssistantMessage
    answers: list[ToolMessage]
    corrective: UserMessage | None

    def says(self, calls: list[ToolCallRecord], observations: list[str], content: str | None,
             corrective: str | None) -> bool:
        """Whether these messages say what a step read from a file says (then the step holds them)."""
        wire = self.message.tool_calls
        return (self.message.content == content and [a.content for a in self.answers] == observations
                and (self.corrective.content if self.corrective is not None else None) == corrective
                and len(wire) == len(calls) == len(self.answers)
                and all((c.id, c.name, c.arguments) == (w.id, w.name, w.arguments)
                        for c, w in zip(calls, wire, strict=True))
                and all(a.tool_call_id == w.id for a, w in zip(self.answers, wire, strict=True)))


def turns_of(messages: list[Message]) -> list[Turn]:
    """The turns of a conversation, one per assistant message."""
    turns: list[Turn] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        i += 1
        if not isinstance(message, AssistantMessage):
            continue
        answers: list[ToolMessage] = []
        while i < len(messages) and isinstance(messages[i], ToolMessage):
            answers.append(messages[i])  # type: ignore[arg-type]
            i += 1
        follow = messages[i] if i < len(messages) else None
        turns.append(Turn(message, answers, follow if isinstance(follow, UserMessage) else None))
    return turns


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
    extra: dict[str, object] = field(default_factory=dict)  # keys of a plugin's dict trajectory, written back as given

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

    def to_dict(self) -> dict[str, object]:
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
    def from_dict(cls, data: Mapping[str, object]) -> Trajectory:
        """A trajectory of :meth:`to_dict` from any version of the files; keys it does not know go to ``extra``
        (values of the wrong type are read as the field's default)."""
        known = {f.name for f in fields(cls)} - {"extra"}
        messages = [as_message(m) for m in _dicts(data.get("messages"))]
        steps = _dicts(data.get("steps"))
        turns: list[Turn | None] = list(turns_of(messages))
        if len(turns) != len(steps):  # the steps are not this conversation's turns: each keeps its own
            turns = [None] * len(steps)
        reasoning = data.get("reasoning")
        return cls(
            question=_get(data, "question", str, ""), agent_index=_get(data, "agent_index", int, 0),
            policy=_get(data, "policy", str, ""), messages=messages, tools=_get(data, "tools", list, []),
            steps=[StepRecord.from_dict(s, k, turn) for k, (s, turn) in enumerate(zip(steps, turns, strict=True))],
            answer=_get(data, "answer", list, []), answer_ids=_get(data, "answer_ids", list, []),
            reasoning={int(k): str(v) for k, v in reasoning.items()} if isinstance(reasoning, Mapping) else {},
            finished=_get(data, "finished", bool, False), stop_reason=_get(data, "stop_reason", str, ""),
            error=_text(data.get("error")), telemetry=_counts(data.get("telemetry")),
            usage=Usage(**_counts(data.get("usage"))), wall_s=_number(data.get("wall_s")),
            confidence=_text(data.get("confidence")), confidence_reason=_text(data.get("confidence_reason")),
            extra={key: value for key, value in data.items() if key not in known})

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

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> RankedNode:
        return cls(_get(data, "index", int, -1), _get(data, "node_id", str, ""), _get(data, "name", str, ""),
                   _get(data, "type", str, ""), _get(data, "votes", int, 0), _number(data.get("score")),
                   _get(data, "first_position", int, 0), _get(data, "tie_group", int, 0))


@dataclass
class Retrieval:
    """The result of one question: the fused ranking and every agent's trajectory."""

    question: str
    ranked: list[RankedNode]
    trajectories: list[Trajectory]
    config: dict[str, object] = field(default_factory=dict)
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

    def to_record(self) -> dict[str, object]:
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

    def to_dict(self, agents: bool = True) -> dict[str, object]:
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
    def from_dict(cls, data: Mapping[str, object]) -> Retrieval:
        """A record of :meth:`to_dict`, packed or not (see :mod:`ark.runtime.trajectory_file`)."""
        from .trajectory_file import unpack_record

        data = unpack_record(dict(data))
        question = data["question"]
        if not isinstance(question, str):
            raise TypeError(f"a retrieval record's question must be text, got {type(question).__name__}")
        return cls(question=question, ranked=[RankedNode.from_dict(n) for n in _dicts(data.get("ranked"))],
                   trajectories=[Trajectory.from_dict(t) for t in _dicts(data.get("agents"))],
                   config=dict(_get(data, "config", dict, {})), policy=_get(data, "policy", str, ""),
                   wall_s=_number(data.get("wall_s")), graph=_get(data, "graph", str, ""),
                   confidence=_text(data.get("confidence")), confidence_reason=_text(data.get("confidence_reason")))

    def to_reference_format(self) -> dict[str, object]:
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

    def to_sft_samples(self, include_system: bool = False) -> list[dict[str, str | list[dict]]]:
        """One distillation sample per trajectory (see :meth:`Trajectory.to_sft_sample`)."""
        return [t.to_sft_sample(include_system) for t in self.trajectories]
