"""Chat-format training data: one ``{"messages": [...], "tools": "<JSON string>"}`` object a line.

This is the conversational format TRL's trainers read. Tool-call arguments and tool schemas are kept as JSON
strings (Arrow cannot hold the changing shapes of arbitrary argument objects). :func:`check_chat_sample` names
what is wrong with a sample; :func:`chat_statistics` counts samples, turns and characters.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ark.errors import ArkError

from ..storage.jsonl import read_jsonl, write_jsonl_atomic

if TYPE_CHECKING:
    from ..runtime.records import Trajectory

ROLES = ("system", "user", "assistant", "tool")


class ChatDatasetError(ValueError, ArkError):
    """A chat sample or file that cannot be trained on."""


def check_chat_sample(sample: Mapping[str, Any], where: str = "sample") -> None:
    """Raise :class:`ChatDatasetError` naming the problem: no messages, an unknown role, tool-call arguments
    that are not JSON strings, or no assistant turn to learn from."""
    messages = sample.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ChatDatasetError(f"{where}: 'messages' must be a non-empty list")
    for position, message in enumerate(messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        if role not in ROLES:
            raise ChatDatasetError(f"{where}, message {position}: role {role!r} is not one of {', '.join(ROLES)}")
        for call in message.get("tool_calls") or []:
            arguments = (call.get("function") or {}).get("arguments")
            if not isinstance(arguments, str):
                raise ChatDatasetError(f"{where}, message {position}: tool-call arguments must be a JSON string, "
                                       f"got {type(arguments).__name__}")
    if not any(m.get("role") == "assistant" for m in messages):
        raise ChatDatasetError(f"{where}: no assistant turn, so nothing would be trained")
    tools = sample.get("tools")
    if tools is not None and not isinstance(tools, str):
        raise ChatDatasetError(f"{where}: 'tools' must be the tool schemas as a JSON string")


def write_chat_dataset(path: str | Path, samples: Iterable[Mapping[str, Any]]) -> int:
    """Check every sample and write them atomically; returns how many were written."""
    checked = []
    for n, sample in enumerate(samples):
        check_chat_sample(sample, where=f"sample {n}")
        checked.append(dict(sample))
    write_jsonl_atomic(path, checked)
    return len(checked)


def read_chat_dataset(path: str | Path) -> list[dict[str, Any]]:
    """Read and check a chat dataset file; an empty or missing file is an error naming the path."""
    samples = read_jsonl(path)
    if not samples:
        raise ChatDatasetError(f"{path}: no samples (missing or empty file)")
    for n, sample in enumerate(samples, start=1):
        check_chat_sample(sample, where=f"{path}, line {n}")
    return samples


def chat_statistics(samples: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Samples, messages per role, tool calls per tool name and characters per role (a quick size check)."""
    roles: Counter[str] = Counter()
    characters: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    count = 0
    for sample in samples:
        count += 1
        for message in sample["messages"]:
            role = message["role"]
            roles[role] += 1
            characters[role] += len(message.get("content") or "")
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                calls[str(function.get("name"))] += 1
                characters[role] += len(function.get("arguments") or "")
    return {"samples": count, "messages": dict(roles), "characters": dict(characters), "tool_calls": dict(calls)}


def tools_json(tools: list[dict[str, Any]]) -> str:
    """Tool schemas as the JSON string a chat sample stores."""
    return json.dumps(tools, ensure_ascii=False)


def record_trajectories(record: Mapping[str, Any]) -> list[Trajectory]:
    """The agent trajectories of one retrieval record: a line of ``ark ask --trajectories`` / ``ARK(trajectory_path=)``
    (agents under ``agents``) or of an eval run's ``trajectories.jsonl`` (under ``trajectories``), loaded through
    :meth:`Trajectory.from_dict` so every record format it reads works here."""
    from ..runtime.trajectory_file import record_trajectories as typed_trajectories

    return typed_trajectories(record)


def record_sft_samples(record: Mapping[str, Any], include_system: bool = True) -> list[dict[str, Any]]:
    """One chat sample per agent trajectory of a retrieval record (see :func:`record_trajectories`).

    ``include_system`` keeps the system prompt, so the student trains on exactly the context the agent loop gives
    it at inference (the reference implementation drops it; pass False for that format).
    """
    return [trajectory.to_sft_sample(include_system) for trajectory in record_trajectories(record)]
