"""Questions with their gold answers, and our JSONL query-file format.

One query a line: ``{"id": str, "query": str, "answer_ids": [str, ...], "template": str}``; ``template`` may
be missing or null. Answer ids are node ids of the graph the questions are about (``graph.index_of`` maps
them). Question-answering files give the answer as text, with or instead of ids: ``"answer": str`` (a set as
comma-separated names, or a list of names) and optionally ``"answer_type"`` (entity, set, number, boolean;
inferred from the answer when missing).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ark.graph.ids import id_text
from ark.storage.jsonl import parse_json_object


@dataclass(frozen=True)
class Query:
    """One question: its id, text, gold answer node ids and the template that produced it (if any)."""

    id: str
    query: str
    answer_ids: list[str]
    template: str | None = None
    answer: str | None = None  # the answer as text (question answering), scored with answer metrics
    answer_type: str | None = None  # entity | set | number | boolean (None: inferred from the answer)


REQUIRED_FIELDS = ("id", "query", "answer_ids")  # answer_ids may be replaced by "answer"
ANSWER_TYPES = ("entity", "set", "number", "boolean")


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
    record = parse_json_object(line, where)
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    if "answer_ids" in missing and "answer" in record:
        missing.remove("answer_ids")
    if missing:
        required = ", ".join(REQUIRED_FIELDS)
        raise ValueError(f"{where}: missing field(s) {', '.join(missing)}; required: {required} (or answer "
                         "instead of answer_ids)")
    answers = record.get("answer_ids", [])
    if not isinstance(answers, list):
        raise ValueError(f"{where}: 'answer_ids' must be a list of node ids, got {answers!r}")
    if not isinstance(record["query"], str) or not record["query"].strip():
        raise ValueError(f"{where}: 'query' must be a non-empty string, got {record['query']!r}")
    template = record.get("template")
    answer, answer_type = _answer_text(record, where)
    return Query(
        id=id_text(record["id"], f"{where}: 'id'", "query ids"),
        query=record["query"],
        answer_ids=[id_text(a, f"{where}: 'answer_ids'") for a in answers],
        template=None if template is None else str(template),
        answer=answer,
        answer_type=answer_type,
    )


def _answer_text(record: dict, where: str) -> tuple[str | None, str | None]:
    """``(answer, answer_type)`` of a line: lists of names become comma-separated text; bad values are refused."""
    answer = record.get("answer")
    answer_type = record.get("answer_type")
    if answer_type is not None and answer_type not in ANSWER_TYPES:
        raise ValueError(f"{where}: unknown answer_type {answer_type!r}; valid: {', '.join(ANSWER_TYPES)}")
    if answer is None:
        if answer_type is not None:
            raise ValueError(f"{where}: 'answer_type' given without an 'answer'")
        return None, None
    if isinstance(answer, list):
        answer = ", ".join(str(a) for a in answer)
        answer_type = answer_type or "set"
    elif isinstance(answer, bool):
        answer = "yes" if answer else "no"
        answer_type = answer_type or "boolean"
    elif isinstance(answer, int | float):
        answer = str(answer)
        answer_type = answer_type or "number"
    elif not isinstance(answer, str):
        raise ValueError(f"{where}: 'answer' must be text, a number, true/false or a list of names, got {answer!r}")
    return answer, answer_type
