"""Questions with their gold answers, and our JSONL query-file format.

One query a line: ``{"id": str, "query": str, "answer_ids": [str, ...], "template": str}``; ``template`` may
be missing or null. Answer ids are node ids of the graph the questions are about (``graph.index_of`` maps
them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Query:
    """One question: its id, text, gold answer node ids and the template that produced it (if any)."""

    id: str
    query: str
    answer_ids: list[str]
    template: str | None = None


REQUIRED_FIELDS = ("id", "query", "answer_ids")


def read_query_jsonl(path: str | Path) -> list[Query]:
    """Read a JSONL query file; ``ValueError`` names the file, the line and what is wrong with it."""
    path = Path(path)
    queries: list[Query] = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            queries.append(_parse_line(line, path, line_no))
    return queries


def _parse_line(line: str, path: Path, line_no: int) -> Query:
    where = f"{path}, line {line_no}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: not valid JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    if missing:
        required = ", ".join(REQUIRED_FIELDS)
        raise ValueError(f"{where}: missing field(s) {', '.join(missing)}; required: {required}")
    answers = record["answer_ids"]
    if not isinstance(answers, list):
        raise ValueError(f"{where}: 'answer_ids' must be a list of node ids, got {answers!r}")
    if not isinstance(record["query"], str) or not record["query"].strip():
        raise ValueError(f"{where}: 'query' must be a non-empty string, got {record['query']!r}")
    template = record.get("template")
    return Query(
        id=str(record["id"]),
        query=record["query"],
        answer_ids=[str(a) for a in answers],
        template=None if template is None else str(template),
    )
