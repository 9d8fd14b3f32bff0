"""Append-only JSONL files that survive being killed: each line is written whole, flushed and fsynced.

A run killed mid-write leaves at most one torn last line (no trailing newline); reopening truncates it, so the
file again holds only complete records and the interrupted record is simply redone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..atomic import atomic_file, atomic_write_text
from ..jsonl import complete_end, repair_torn_tail


def read_complete_lines(path: Path, repair: bool = True) -> list[dict[str, Any]]:
    """The complete records of ``path`` (none if missing); a torn trailing line is cut off when ``repair``."""
    if not path.is_file():
        return []
    if repair:
        repair_torn_tail(path)
    data = path.read_bytes()
    end = complete_end(data)  # everything after the last newline is an unfinished write
    records = []
    for line_no, line in enumerate(data[:end].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}, line {line_no}: not valid JSON ({error.msg}); the file is damaged") from None
    return records


def write_jsonl_atomic(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Replace ``path`` with ``records`` (one JSON object a line) through a temporary file and a rename."""
    with atomic_file(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_json_atomic(path: Path, value: Any) -> None:
    """Write ``value`` as indented JSON to ``path`` through a temporary file and a rename."""
    atomic_write_text(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


class JsonlAppender:
    """Appends one record per line, each flushed and fsynced before :meth:`append` returns."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_torn_tail(path)  # else the first record would be glued onto a torn last line
        self.path = path
        self._handle = path.open("a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
