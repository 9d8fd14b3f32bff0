"""Reading a GraphScout quiz file back, with checks: every question must carry what training and scoring use.

One JSON object a line (``ark quiz GRAPH --style graphscout`` writes them)::

    {"id", "query", "answer", "answer_type", "answer_ids", "clue_ids", "pattern", "difficulty", "hops", "split", ...}

``answer`` is the answer text (set members joined by ", "; numbers as digits; booleans "yes"/"no"),
``answer_ids`` the answer nodes for sets and entities (empty for numbers and booleans), ``clue_ids`` the evidence
nodes the clue reward looks for. The file is also a valid query file for :func:`ark.loaders.read_query_jsonl`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....graph.ids import id_text
from ....metrics.answers import ANSWER_TYPES
from ....storage.jsonl import parse_json_object

if TYPE_CHECKING:
    from ....graph import KnowledgeGraph

REQUIRED = ("id", "query", "answer", "answer_type", "clue_ids")


@dataclass(frozen=True)
class GraphScoutQuestion:
    """One quiz question as training and evaluation read it (``record`` keeps every field of the line)."""

    id: str
    query: str
    answer: str
    answer_type: str
    clue_ids: list[str]
    answer_ids: list[str] = field(default_factory=list)
    pattern: str | None = None
    difficulty: str | None = None
    hops: int | None = None
    split: str | None = None
    record: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def read_graphscout_quiz(path: str | Path, graph: KnowledgeGraph | None = None) -> list[GraphScoutQuestion]:
    """The questions of a GraphScout quiz file; ``ValueError`` names the file, the line and what is missing or
    malformed. With ``graph``, clue and answer ids must be nodes of it."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"quiz file {path} does not exist; write one with "
                         f"'ark quiz GRAPH --style graphscout --out {path}'")
    questions: list[GraphScoutQuestion] = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if line.strip():
                questions.append(_parse(line, f"{path}, line {line_no}", graph))
    if not questions:
        raise ValueError(f"quiz file {path} has no questions")
    return questions


def _parse(line: str, where: str, graph: KnowledgeGraph | None) -> GraphScoutQuestion:
    record = parse_json_object(line, where)
    missing = [name for name in REQUIRED if name not in record]
    if missing:
        hint = ""
        if "answer" in missing or "clue_ids" in missing:
            hint = (" (a GraphScout quiz needs answer text and clue nodes; a STaRK-style 'ark quiz' file has neither: "
                    "write one with 'ark quiz GRAPH --style graphscout')")
        raise ValueError(f"{where}: missing field(s) {', '.join(missing)}; required: {', '.join(REQUIRED)}{hint}")
    answer, answer_type = record["answer"], record["answer_type"]
    if not isinstance(answer, str) or not answer.strip():
        raise ValueError(f"{where}: 'answer' must be non-empty text, got {answer!r}")
    if answer_type not in ANSWER_TYPES:
        raise ValueError(f"{where}: unknown answer_type {answer_type!r}; valid: {', '.join(ANSWER_TYPES)}")
    if not isinstance(record["query"], str) or not record["query"].strip():
        raise ValueError(f"{where}: 'query' must be a non-empty string, got {record['query']!r}")
    clues = record["clue_ids"]
    if not isinstance(clues, list) or not clues or not all(isinstance(c, str) and c for c in clues):
        raise ValueError(f"{where}: 'clue_ids' must be a non-empty list of node ids, got {clues!r}")
    answer_ids = record.get("answer_ids", [])
    if not isinstance(answer_ids, list):
        raise ValueError(f"{where}: 'answer_ids' must be a list of node ids, got {answer_ids!r}")
    answer_ids = [id_text(a, f"{where}: 'answer_ids'") for a in answer_ids]  # text or integers (ark.graph.ids)
    if graph is not None:
        unknown = [i for i in [*clues, *answer_ids] if not graph.has_node(str(i))]
        if unknown:
            name = graph.info.label("the graph")
            raise ValueError(f"{where}: node id(s) {unknown[:5]} are not in {name!r}; was the quiz made on another "
                             f"graph?")
    hops = record.get("hops")
    return GraphScoutQuestion(
        id=id_text(record["id"], f"{where}: 'id'", "question ids"), query=record["query"], answer=answer,
        answer_type=answer_type, clue_ids=list(clues), answer_ids=answer_ids,
        pattern=record.get("pattern"), difficulty=record.get("difficulty"),
        hops=int(hops) if isinstance(hops, int) else None, split=record.get("split"), record=record)
