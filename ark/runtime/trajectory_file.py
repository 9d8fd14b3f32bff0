"""Trajectory files on disk: one JSON line per question, each agent's history stored once, compressed.

A question's record (:meth:`~ark.runtime.records.Retrieval.to_dict`, or a line of an evaluation run's
``trajectories.jsonl``) holds its agents' trajectories under ``agents`` (or ``trajectories``). Written as they are,
they cost about 1.9 MB a question with the offline policy: every observation is stored twice (as the tool message
the model read and in its step's ``observations``) and the agents of one question read mostly the same nodes.

**Format 2** (:data:`FORMAT_VERSION`, written by :func:`pack_record`) keeps the small, readable fields of the record
as they are (id, question, graph, policy, config, wall time, usage, the fused ranking, ``partial``) and packs the
agents::

    {"format": 2, "id": "q1", "question": "...", "ranked": [...], ...,
     "packed": {"field": "trajectories", "codec": "xz", "data": "<base64>"}}

``data`` is the base64 text of the compressed JSON of the agents in their compact form: each agent's messages
are kept whole and are the one copy of what the model saw; a step leaves out what its messages already hold (its
``observations``, the assistant's ``content``, the ``corrective`` user message, and each tool call's ``id``,
``name`` and ``arguments``) and lists those keys under ``"_derived"``. A key is left out only when it equals what
the messages give, so :func:`unpack_record` restores the record exactly. ``codec`` is ``xz`` (LZMA preset 1: its
large window also finds what the agents of one question share) or ``zlib`` where Python lacks ``lzma``.

**Format 1** (no ``format`` key: files written before) is the record as it is; :func:`unpack_record` returns it
unchanged, so every reader (:func:`read_trajectory_file`, :meth:`Retrieval.from_dict`, ``ark trajectory show``)
loads both.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ark.errors import ArkError

from ..storage.jsonl import read_jsonl

if TYPE_CHECKING:
    from .records import Trajectory

FORMAT_VERSION = 2
AGENT_FIELDS = ("agents", "trajectories")
DERIVED = "_derived"
STEP_ORDER = ("index", "tool_calls", "observations", "wall_s", "llm_s", "usage", "cached", "content", "corrective")
CALL_ORDER = ("id", "name", "arguments", "parsed_ok", "ok", "error", "node_indices", "result")
XZ_PRESET = 1  # 27x smaller than plain records (base64 included), ~0.1 s a question; higher presets: -10%, 7x slower

try:
    import lzma
except ImportError:  # pragma: no cover - Python built without liblzma
    lzma = None  # type: ignore[assignment]
DECODE_ERRORS: tuple[type[Exception], ...] = (ValueError, KeyError, TypeError, zlib.error) + (
    () if lzma is None else (lzma.LZMAError,))


class TrajectoryFormatError(ValueError, ArkError):
    """A record this version cannot read (damaged packed data, or a newer format)."""


def pack_record(record: dict[str, object]) -> dict[str, object]:
    """``record`` in format 2 (see the module doc); records without an agents list are returned as they are."""
    if "format" in record:
        return record
    field = next((key for key in AGENT_FIELDS if isinstance(record.get(key), list)), None)
    if field is None:
        return record
    codec = "xz" if lzma is not None else "zlib"
    agents = record[field]
    assert isinstance(agents, list)  # the field was chosen as the one holding a list
    data = json.dumps([compact_agent(a) for a in agents], ensure_ascii=False, separators=(",", ":")).encode()
    packed = lzma.compress(data, preset=XZ_PRESET) if codec == "xz" else zlib.compress(data, 9)
    out: dict[str, object] = {"format": FORMAT_VERSION}
    out.update((key, value) for key, value in record.items() if key != field)
    out["packed"] = {"field": field, "codec": codec, "data": base64.b64encode(packed).decode("ascii")}
    return out


def unpack_record(record: dict[str, object]) -> dict[str, object]:
    """The record as :meth:`Retrieval.to_dict` (or the runner) made it, from any format."""
    version = record.get("format")
    if version is None:
        return record
    if version == 1:
        return {key: value for key, value in record.items() if key != "format"}
    if version != FORMAT_VERSION:
        raise TrajectoryFormatError(f"trajectory record format {version!r} is not one this version of ARK reads "
                                    f"(1 or {FORMAT_VERSION}); a newer ARK wrote it")
    packed = record.get("packed")
    if not isinstance(packed, dict) or packed.get("field") not in AGENT_FIELDS:
        raise TrajectoryFormatError("format 2 record without a valid 'packed' field")
    try:
        raw = base64.b64decode(packed["data"], validate=True)
        if packed.get("codec") == "xz":
            if lzma is None:  # pragma: no cover
                raise TrajectoryFormatError("this Python has no lzma module to read xz-packed trajectories")
            data = lzma.decompress(raw)
        elif packed.get("codec") == "zlib":
            data = zlib.decompress(raw)
        else:
            raise TrajectoryFormatError(f"unknown codec {packed.get('codec')!r} (valid: xz, zlib)")
        agents = json.loads(data)
    except DECODE_ERRORS as exc:
        if isinstance(exc, TrajectoryFormatError):
            raise
        raise TrajectoryFormatError(f"damaged packed trajectories ({type(exc).__name__}: {exc})") from None
    out = {key: value for key, value in record.items() if key not in ("format", "packed")}
    out[packed["field"]] = [expand_agent(a) for a in agents]
    return out


def record_trajectories(record: Mapping[str, object]) -> list[Trajectory]:
    """The typed agent trajectories of a retrieval record read from a file or JSON, packed or not: its ``agents``
    (``ark ask``) or ``trajectories`` (run files), through :meth:`Trajectory.from_dict` so every format it reads
    works here (an agent's index defaults to its position; entries that are not objects are skipped)."""
    from .records import Trajectory

    record = unpack_record(dict(record))
    agents: list[object] = next((found for key in AGENT_FIELDS
                                 if isinstance(found := record.get(key), list) and found), [])
    return [Trajectory.from_dict({"agent_index": k, **agent}) for k, agent in enumerate(agents)
            if isinstance(agent, Mapping)]


def read_trajectory_file(path: str | Path, repair: bool = False) -> list[dict[str, object]]:
    """Every record of a trajectory file, unpacked (formats 1 and 2; see :func:`read_jsonl` for ``repair``)."""
    return list(TrajectoryRecords(path, repair=repair))


class TrajectoryRecords:
    """The records of a trajectory file, unpacked one at a time on each pass (a run's 400 questions would take
    gigabytes unpacked at once)."""

    def __init__(self, path: str | Path, repair: bool = False) -> None:
        self.path = Path(path)
        self._records = read_jsonl(self.path, repair=repair)

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[dict[str, object]]:
        for number, record in enumerate(self._records):
            yield self.unpack(record, number)

    def __getitem__(self, number: int) -> dict[str, object]:
        return self.unpack(self._records[number], number)

    def unpack(self, record: object, number: int) -> dict[str, object]:
        if not isinstance(record, dict):
            raise TrajectoryFormatError(f"{self.path}, record {number}: a {type(record).__name__}, not a JSON object")
        try:
            return unpack_record(record)
        except TrajectoryFormatError as exc:
            raise TrajectoryFormatError(f"{self.path}, record {number}: {exc}") from None


# ----------------------------------------------------------------------------- one agent's compact form
def compact_agent(agent: object) -> object:
    """``agent`` (a :meth:`Trajectory.to_dict`) without the step fields its messages already hold."""
    if not isinstance(agent, dict) or not isinstance(agent.get("steps"), list):
        return agent
    turns = _turns(agent.get("messages"))
    if turns is None or len(turns) != len(agent["steps"]):
        return agent
    steps = [_compact_step(step, turn) for step, turn in zip(agent["steps"], turns, strict=True)]
    return {**agent, "steps": steps}


def expand_agent(agent: object) -> object:
    """The inverse of :func:`compact_agent`."""
    if not isinstance(agent, dict) or not isinstance(agent.get("steps"), list):
        return agent
    turns = _turns(agent.get("messages")) or []
    steps = [_expand_step(step, turns[k] if k < len(turns) else None) for k, step in enumerate(agent["steps"])]
    return {**agent, "steps": steps}


@dataclass
class _Turn:
    """What a step derives from its assistant message: ``derived`` its content, the corrective user message after it
    and the observations of its tool messages; ``calls`` each call's id, name and arguments."""

    derived: dict[str, object]
    calls: list[dict[str, object]]


def _turns(messages: object) -> list[_Turn] | None:
    """Per assistant message, what a step derives from: its content, calls, answering tool messages and the user
    message after them."""
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return None
    turns: list[_Turn] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        i += 1
        if message.get("role") != "assistant":
            continue
        observations = []
        while i < len(messages) and messages[i].get("role") == "tool":
            observations.append(messages[i].get("content"))
            i += 1
        user = messages[i] if i < len(messages) and messages[i].get("role") == "user" else None
        calls = []
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else {}
            calls.append({"id": call.get("id") if isinstance(call, dict) else None, "name": function.get("name"),
                          "arguments": function.get("arguments")})
        derived = {"content": message.get("content"), "corrective": user.get("content") if user else None,
                   "observations": observations}
        turns.append(_Turn(derived, calls))
    return turns


def _compact_step(step: object, turn: _Turn) -> object:
    if not isinstance(step, dict) or DERIVED in step:
        return step
    derived = [key for key in ("observations", "content", "corrective")
               if key in step and step[key] == turn.derived[key]]
    out = {key: value for key, value in step.items() if key not in derived}
    calls = step.get("tool_calls")
    if isinstance(calls, list) and len(calls) == len(turn.calls):
        out["tool_calls"] = [_compact_call(call, source) for call, source in zip(calls, turn.calls, strict=True)]
    if derived:
        out[DERIVED] = derived
    return out


def _compact_call(call: object, source: dict[str, object]) -> object:
    if not isinstance(call, dict) or DERIVED in call:
        return call
    derived = [key for key in ("id", "name", "arguments") if key in call and call[key] == source[key]]
    if not derived:
        return call
    out = {key: value for key, value in call.items() if key not in derived}
    out[DERIVED] = derived
    return out


def _expand_step(step: object, turn: _Turn | None) -> object:
    if not isinstance(step, dict):
        return step
    if turn is None:
        if DERIVED in step or any(isinstance(c, dict) and DERIVED in c for c in step.get("tool_calls") or []):
            raise TrajectoryFormatError("a packed step refers to a message its agent does not have")
        return step
    values = {key: value for key, value in step.items() if key != DERIVED}
    values.update((key, turn.derived[key]) for key in step.get(DERIVED, []))
    calls = values.get("tool_calls")
    if isinstance(calls, list):
        values["tool_calls"] = [_expand_call(call, turn.calls[j] if j < len(turn.calls) else None)
                                for j, call in enumerate(calls)]
    return _ordered(values, STEP_ORDER)


def _expand_call(call: object, source: dict[str, object] | None) -> object:
    if not isinstance(call, dict) or DERIVED not in call:
        return call
    if source is None:
        raise TrajectoryFormatError("a packed tool call refers to a call its assistant message does not have")
    values = {key: value for key, value in call.items() if key != DERIVED}
    values.update((key, source[key]) for key in call[DERIVED])
    return _ordered(values, CALL_ORDER)


def _ordered(values: dict[str, object], order: tuple[str, ...]) -> dict[str, object]:
    """``values`` with the known keys in their record order (as the dataclasses write them), others after."""
    out = {key: values[key] for key in order if key in values}
    out.update((key, value) for key, value in values.items() if key not in out)
    return out
