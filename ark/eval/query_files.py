"""Opening a query file of any supported format and checking it against a graph before a run.

Formats: our JSONL (``.jsonl``, see ``ark.loaders.queries``; answer ids and/or answer text); a STaRK QA folder
(holding ``stark_qa/``) or a STaRK ``stark_qa.csv`` / ``stark_qa_human_generated_eval.csv`` path, optionally with a
split name; a GRBench question file (``data.json`` or any ``.json`` of ``{"qid", "question", "answer"}`` lines, or
a GRBench domain folder holding ``data.json``): free-text answers, mapped to answer ids by node name where they
name nodes (:class:`ark.loaders.grbench.AnswerMatcher`), so retrieval metrics apply to those questions too.

Problems are collected rather than raised one at a time, so the user sees how many queries are affected:
malformed lines (missing fields, bad JSON), repeated query ids, and answer ids the graph does not have.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ark.errors import ArkError

from ..loaders.queries import Query, _parse_line
from ..loaders.stark_qa import HUMAN_FILE, SYNTHESIZED_FILE, load_stark_qa

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

FORMATS_HELP = (
    "a .jsonl query file, a STaRK QA folder (containing stark_qa/), a STaRK stark_qa.csv / "
    "stark_qa_human_generated_eval.csv file, or a GRBench question file (data.json) or folder"
)
GRBENCH = "grbench"


class QueryFileError(ValueError, ArkError):
    """A query file that cannot be used as it is; the message counts the problems and shows examples."""


@dataclass
class QueryCheck:
    """The usable queries of a file and what is wrong with the others."""

    queries: list[Query]
    malformed: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    unknown_answers: dict[str, list[str]] = field(default_factory=dict)
    source_format: str = "ids"  # "grbench": answers are text, matched to nodes by name when opened

    @property
    def ok(self) -> bool:
        return not (self.malformed or self.duplicate_ids or self.unknown_answers)

    def describe(self, examples: int = 3) -> str:
        """A human-readable account of the problems: counts first, then a few examples of each."""
        parts: list[str] = []
        if self.malformed:
            shown = "; ".join(self.malformed[:examples])
            parts.append(f"{len(self.malformed)} malformed line(s), e.g. {shown}")
        if self.duplicate_ids:
            parts.append(f"{len(self.duplicate_ids)} repeated query id(s), e.g. "
                         f"{', '.join(self.duplicate_ids[:examples])}")
        if self.unknown_answers:
            n_ids = sum(len(v) for v in self.unknown_answers.values())
            first = list(self.unknown_answers.items())[:examples]
            shown = "; ".join(f"{qid}: {', '.join(ids[:3])}" for qid, ids in first)
            parts.append(f"{len(self.unknown_answers)} query(ies) with {n_ids} answer id(s) not in the graph, e.g. "
                         f"{shown}")
        return "\n".join(parts)


def read_queries(path: str | Path, split: str | None = None, human: bool = False) -> QueryCheck:
    """Read any supported query file, keeping malformed JSONL lines aside instead of stopping at the first."""
    path = Path(path)
    if path.is_dir():
        if (path / "data.json").is_file() and not (path / "stark_qa").is_dir():
            return _read_grbench_tolerant(path / "data.json", split)
        if not (path / "stark_qa").is_dir():
            raise QueryFileError(f"{path} is a folder without stark_qa/ or data.json; expected {FORMATS_HELP}")
        return _dedupe(load_stark_qa(path, split=split, human=human), [])
    if not path.is_file():
        raise QueryFileError(f"query file not found: {path}; expected {FORMATS_HELP}")
    if path.suffix == ".jsonl":
        if split is not None:
            raise QueryFileError(f"--split {split!r} applies to STaRK question files only, not {path}")
        return _read_jsonl_tolerant(path)
    if path.suffix == ".json":
        return _read_grbench_tolerant(path, split)
    if path.suffix == ".csv":
        dataset_dir = path.parent.parent
        if path.name == HUMAN_FILE.name:
            human = True
        elif path.name != SYNTHESIZED_FILE.name:
            raise QueryFileError(f"unrecognised CSV {path.name!r}; expected {FORMATS_HELP}")
        return _dedupe(load_stark_qa(dataset_dir, split=split, human=human), [])
    raise QueryFileError(f"unrecognised query file {path}; expected {FORMATS_HELP}")


def _read_jsonl_tolerant(path: Path) -> QueryCheck:
    queries: list[Query] = []
    malformed: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                queries.append(_parse_line(line, path, line_no))
            except ValueError as error:
                malformed.append(str(error).removeprefix(f"{path}, "))
    return _dedupe(queries, malformed)


def _read_grbench_tolerant(path: Path, split: str | None) -> QueryCheck:
    """GRBench questions, each with the template ``<domain>/<level>`` (the domain folder's name; the level from the
    shipped table, else ``unlabelled``), so scores come per domain and level as in GraphScout's Figure 4."""
    from ..loaders.grbench import grbench_level, grbench_levels, parse_grbench_question

    if split is not None:
        raise QueryFileError(f"--split {split!r} applies to STaRK question files only, not {path}")
    queries: list[Query] = []
    malformed: list[str] = []
    domain, levels = path.resolve().parent.name, grbench_levels()
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                question = parse_grbench_question(line, f"line {line_no}")
            except ValueError as error:
                malformed.append(str(error))
                continue
            template = f"{domain}/{grbench_level(domain, question.qid, levels)}"
            queries.append(Query(question.qid, question.question, [], template, answer=question.answer))
    check = _dedupe(queries, malformed)
    check.source_format = GRBENCH
    return check


def match_answer_ids(check: QueryCheck, graph: KnowledgeGraph) -> QueryCheck:
    """Give queries with answer text but no answer ids the ids of the nodes their answer names (entity and set
    answers; numbers and yes/no name no node)."""
    from ..loaders.grbench import AnswerMatcher
    from ..metrics.answers import infer_answer_type

    pending = [q for q in check.queries if q.answer is not None and not q.answer_ids
               and (q.answer_type or infer_answer_type(q.answer)) in ("entity", "set")]
    if pending:
        matcher = AnswerMatcher(graph)
        found = {q.id: matcher.ids(q.answer) for q in pending if q.answer is not None}  # all of them
        check.queries = [replace(q, answer_ids=found[q.id]) if q.id in found else q for q in check.queries]
    return check


def _dedupe(queries: list[Query], malformed: list[str]) -> QueryCheck:
    seen: set[str] = set()
    kept: list[Query] = []
    duplicates: list[str] = []
    for query in queries:
        if query.id in seen:
            duplicates.append(query.id)
            continue
        seen.add(query.id)
        kept.append(query)
    return QueryCheck(queries=kept, malformed=malformed, duplicate_ids=duplicates)


def check_answers(check: QueryCheck, graph: KnowledgeGraph) -> QueryCheck:
    """Record, per query, the answer ids that are not nodes of ``graph``."""
    check.unknown_answers = {
        q.id: unknown for q in check.queries if (unknown := [a for a in q.answer_ids if not graph.has_node(a)])
    }
    return check


def open_queries(
    path: str | Path,
    graph: KnowledgeGraph,
    split: str | None = None,
    human: bool = False,
    skip_invalid: bool = False,
    limit: int | None = None,
) -> tuple[list[Query], QueryCheck]:
    """The queries to run, checked against ``graph``.

    Without ``skip_invalid`` any problem raises :class:`QueryFileError`. With it, malformed lines and repeated ids
    are left out and queries with unknown answer ids are kept: their unknown answers are dropped when scoring
    (STaRK drops non-candidate answers), so a query left with no answer scores 0.
    """
    check = read_queries(path, split=split, human=human)
    if check.source_format == GRBENCH:
        check = match_answer_ids(check, graph)
    check = check_answers(check, graph)
    if not check.ok and not skip_invalid:
        raise QueryFileError(f"{path}: {check.describe()}\n(pass --skip-invalid to continue with the rest)")
    queries = check.queries[:limit] if limit is not None else check.queries
    return queries, check

