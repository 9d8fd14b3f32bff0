"""Messages between the parent and a sandbox worker: JSON objects framed by a 4-byte big-endian length, over pipes
(the framing of :mod:`ark.graphdb.channel`).

The parent reads with a deadline, so a worker that hangs or floods never blocks it past the call's wall-clock
limit, and trusts nothing it reads: every frame from a worker is checked against its schema
(:func:`check_result_frame`, :func:`check_cypher_frame`) and a frame that fails is a protocol error, never an
exception in the caller.
"""

from __future__ import annotations

import math
from typing import Any

from ark.errors import ArkError
from ark.graphdb.channel import (  # the framing, shared with the out-of-process Cypher engine
    _HEADER,
    MAX_MESSAGE_BYTES,
    ChannelClosed,
    ChannelCorrupt,
    ChannelTimeout,
    encode,
    read_message,
    write_message,
)

__all__ = ["_HEADER", "MAX_MESSAGE_BYTES", "ChannelClosed", "ChannelCorrupt", "ChannelTimeout", "FrameInvalid",
           "check_cypher_frame", "check_result_frame", "encode", "read_message", "write_message"]


# --------------------------------------------------------------------------------------------- frame schemas
MAX_RESULT_BYTES = 32 * 2**20  # the largest frame the parent reads from a worker
MAX_CALL_RECORDS = 100  # Cypher calls a worker reports per run
MAX_TEXT_CHARS = 100_000  # any text field of a frame
RESULT_ERROR_KINDS = frozenset({"syntax", "exception", "timeout", "memory", "output_limit", "cypher"})
_CALL_FIELDS: dict[str, Any] = {  # field -> its type (or types)
    "query": str, "error": str, "message": str, "ms": (int, float), "rows": int, "truncated": bool,
    "node_indices": list, "strings": list}


class FrameInvalid(ArkError):
    """A frame from the worker does not match its schema (the code in the sandbox forged or garbled it)."""


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise FrameInvalid(f"{name} must be a non-negative number, got {str(value)[:40]!r}")
    return float(value)


def _text(value: Any, name: str, *, optional: bool = False, limit: int = MAX_TEXT_CHARS) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise FrameInvalid(f"{name} must be a string of at most {limit} characters")
    return value


def _kind(value: Any) -> str | None:
    if value is not None and not (isinstance(value, str) and value.isidentifier() and len(value) <= 40):
        raise FrameInvalid(f"cypher_kind must be a short word, got {str(value)[:40]!r}")
    return value


def _call_record(record: Any) -> dict[str, Any]:
    if not isinstance(record, dict) or not isinstance(record.get("query"), str):
        raise FrameInvalid("each cypher_calls entry must be an object with a query")
    clean: dict[str, Any] = {}
    for key, value in record.items():
        kind = _CALL_FIELDS.get(key)
        if kind is None:
            raise FrameInvalid(f"unknown cypher_calls field {str(key)[:40]!r}")
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)) or not isinstance(value, kind):
            raise FrameInvalid(f"cypher_calls field {key!r} has the wrong type")
        if key == "ms":
            _number(value, "ms")
        elif key == "node_indices" and not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise FrameInvalid("node_indices must be integers")
        elif key == "strings" and not all(isinstance(v, str) and len(v) <= 1000 for v in value):
            raise FrameInvalid("strings must be short strings")
        elif isinstance(value, str):
            _text(value, key)
        clean[key] = value
    return clean


def check_result_frame(message: dict[str, Any], request_id: int, output_chars: int = 0) -> dict[str, Any]:
    """The fields of a worker's ``result`` frame, checked against the schema (``stdout`` at most ``output_chars``,
    the sandbox's limit, or :data:`MAX_TEXT_CHARS`); :class:`FrameInvalid` otherwise."""
    if message.get("op") != "result" or message.get("id") != request_id or isinstance(message.get("id"), bool):
        raise FrameInvalid(f"expected the result of call {request_id}, got op {str(message.get('op'))[:40]!r}")
    kind = message.get("error_kind")
    if kind is not None and kind not in RESULT_ERROR_KINDS:
        raise FrameInvalid(f"unknown error_kind {str(kind)[:40]!r}")
    calls = message.get("cypher_calls", [])
    if not isinstance(calls, list) or len(calls) > MAX_CALL_RECORDS:
        raise FrameInvalid(f"cypher_calls must be a list of at most {MAX_CALL_RECORDS} entries")
    truncated = message.get("output_truncated", False)
    if not isinstance(truncated, bool):
        raise FrameInvalid("output_truncated must be true or false")
    stdout = _text(message.get("stdout", ""), "stdout", limit=max(output_chars, MAX_TEXT_CHARS))
    return {"stdout": stdout, "error": _text(message.get("error"), "error", optional=True),
            "error_kind": kind, "cypher_kind": _kind(message.get("cypher_kind")),
            "elapsed_s": _number(message.get("elapsed_s", 0.0), "elapsed_s"),
            "cypher_calls": [_call_record(record) for record in calls], "output_truncated": truncated}


def check_cypher_frame(message: dict[str, Any]) -> tuple[int, str, Any, Any]:
    """``(id, query, params, limit)`` of a worker's ``cypher`` frame; :class:`FrameInvalid` when malformed (the
    parameters and limit are checked again by the engine)."""
    frame_id, query, limit = message.get("id"), message.get("query"), message.get("limit")
    if isinstance(frame_id, bool) or not isinstance(frame_id, int):
        raise FrameInvalid("a cypher frame needs an integer id")
    text = _text(query, "query")
    assert text is not None
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise FrameInvalid("limit must be an integer or null")
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        raise FrameInvalid("params must be an object or null")
    if set(message) - {"op", "id", "query", "params", "limit"}:
        raise FrameInvalid("unknown fields in a cypher frame")
    return frame_id, text, params, limit
