"""JSON-lines files that survive a killed writer, with one behaviour everywhere.

Writers append whole lines ending in ``\\n``, flushed and fsynced; a crash mid-write leaves at most one torn last
line (bytes after the last newline). Every appender cuts such a tail off before writing, so the next record
starts on a line of its own, and every reader ignores it (:func:`read_jsonl` with ``repair=True`` also removes it
from the file). A damaged line anywhere else is an error naming the file and line. Whole-file rewrites go through
a temporary file and a rename (:func:`write_jsonl_atomic`).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .atomic import atomic_file, atomic_write_text


def complete_end(data: bytes) -> int:
    """Length of the complete-lines prefix of ``data`` (everything after the last newline is unfinished)."""
    return data.rfind(b"\n") + 1


def repair_torn_tail(path: str | Path) -> int:
    """Cut an unfinished last line (no trailing newline) off ``path``; returns the bytes removed (0 if none).

    A missing or empty file is left alone.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with path.open("r+b") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return 0
        handle.seek(0)
        end = complete_end(handle.read())
        handle.truncate(end)
        handle.flush()
        os.fsync(handle.fileno())
    return size - end


def parse_json_object(line: str, where: str, error: type[ValueError] = ValueError) -> dict[str, Any]:
    """One JSON object from one line of an input file; ``error`` (a ``ValueError``) starting with ``where`` (the file
    and line) says when the line is not valid JSON or not an object. Callers check the fields themselves."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON ({exc.msg})") from None
    except RecursionError:  # Python's reader recurses once per level of arrays and objects
        raise error(f"{where}: arrays and objects nested too deeply to read (about a thousand levels or more); "
                    "flatten the record") from None
    if not isinstance(record, dict):
        raise error(f"{where}: expected a JSON object, got {type(record).__name__}")
    return record


def read_jsonl(path: str | Path, repair: bool = False) -> list[dict[str, Any]]:
    """The complete records of ``path`` (none if it is missing).

    A torn last line is skipped, and cut off the file when ``repair``; a file holding one JSON document (an
    object, or a list of objects) is read as those records. A damaged line elsewhere raises ``ValueError``
    naming the file and line.
    """
    path = Path(path)
    if not path.is_file():
        return []
    if repair:
        repair_torn_tail(path)
    data = path.read_bytes()
    end = complete_end(data)
    records = []
    for line_no, line in enumerate(data[:end].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            whole = _whole_document(data)
            if whole is not None:
                return whole
            raise ValueError(f"{path}, line {line_no}: not valid JSON ({error.msg}); the file is damaged") from None
    if end < len(data) and data[end:].strip():
        # A file written without a final newline holds a last record that may be complete (e.g. one JSON
        # document, or a hand-written file); a writer killed mid-line leaves one that does not parse.
        with contextlib.suppress(json.JSONDecodeError):
            records.append(json.loads(data[end:]))
    return records


def _whole_document(data: bytes) -> list[dict[str, Any]] | None:
    """The records of ``data`` when it is one JSON document spread over several lines, else None."""
    try:
        value = json.loads(data)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, list) else [value]


def append_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    """Append ``records`` with one write of whole lines (the file and its folder are created if missing)."""
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    if not data:
        return
    with JsonlAppender(Path(path)) as appender:
        appender.write_raw(data)


def write_jsonl_atomic(path: str | Path, records: Iterable[dict[str, Any]]) -> Path:
    """Replace ``path`` with ``records`` (one JSON object a line) through a temporary file and a rename."""
    path = Path(path)
    with atomic_file(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def write_json_atomic(path: str | Path, value: Any) -> None:
    """Write ``value`` as indented JSON to ``path`` through a temporary file and a rename."""
    atomic_write_text(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


class JsonlAppender:
    """Appends one record per line, each flushed and fsynced before :meth:`append` returns."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_torn_tail(path)  # else the first record would be glued onto a torn last line
        self.path = path
        self._handle = path.open("a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        self.write_raw(json.dumps(record, ensure_ascii=False) + "\n")

    def write_raw(self, lines: str) -> None:
        """Write whole lines (each ending in a newline) and make them durable."""
        self._handle.write(lines)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
