"""Keep a benchmark's test questions out of the training quizzes: the nodes they name or answer with.

A node is excluded when its name occurs in a benchmark question as a whole run of words (compared as the answer
matcher compares names: case and punctuation ignored), or when the answer matcher
(:class:`ark.loaders.grbench.AnswerMatcher`, the one evaluation uses) maps the question's answer to it. The quizzer
then never draws an excluded node as a seed and drops every question whose anchors, answers, witness or clues touch
one (:class:`~ark.methods.graphscout.quiz.generate.QuizAssembler`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....graph import KnowledgeGraph
from ....loaders.grbench import AnswerMatcher, name_key

MAX_NAME_WORDS = 16  # longer names are not looked for inside questions (titles rarely run longer)


@dataclass
class Exclusions:
    """The excluded node ids and how they were found; ``dropped`` counts quiz questions refused for them."""

    node_ids: frozenset[str] = frozenset()
    questions: int = 0
    named: int = 0  # nodes named in a question
    answered: int = 0  # nodes an answer matched
    unmatched_answers: int = 0  # questions whose answer matched no node
    unnamed_questions: int = 0  # questions naming no node
    dropped: int = 0
    samples: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"Excluded {len(self.node_ids):,} nodes from {self.questions:,} benchmark questions ({self.named:,} "
                f"named in a question, {self.answered:,} matched by an answer); {self.unmatched_answers:,} answers "
                f"and {self.unnamed_questions:,} questions matched no node; {self.dropped:,} quiz questions dropped "
                "for touching an excluded node.")


def read_benchmark_questions(path: str | Path) -> list[tuple[str, Any]]:
    """(question, answer) of each line of a JSONL question file: GRBench's ``question``/``answer`` or ARK's
    ``query``/``answer``. ``ValueError`` names the file and line of a malformed record."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"--exclude-questions: no such file {file}")
    pairs: list[tuple[str, Any]] = []
    with file.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{file}, line {line_no}: not valid JSON ({error.msg})") from None
            text = record.get("question", record.get("query")) if isinstance(record, dict) else None
            if not isinstance(text, str):
                raise ValueError(f"{file}, line {line_no}: expected an object with 'question' (or 'query') and "
                                 "'answer'")
            pairs.append((text, record.get("answer")))
    return pairs


def benchmark_exclusions(graph: KnowledgeGraph, questions: list[tuple[str, Any]]) -> Exclusions:
    """The nodes ``questions`` name or answer with (see the module docstring)."""
    by_name: dict[str, list[str]] = {}
    for i in range(graph.num_nodes):
        key = name_key(graph.name(i))
        if key and len(key.split()) <= MAX_NAME_WORDS:
            by_name.setdefault(key, []).append(graph.node_id(i))
    matcher = AnswerMatcher(graph)
    named: set[str] = set()
    answered: set[str] = set()
    report = Exclusions(questions=len(questions))
    for text, answer in questions:
        found = _named_nodes(name_key(text).split(), by_name)
        named.update(found)
        report.unnamed_questions += not found
        ids: list[str] = []
        for part in answer if isinstance(answer, list) else [answer]:
            if part is not None and str(part).strip():
                ids.extend(matcher.ids(str(part)))
        answered.update(ids)
        report.unmatched_answers += not ids
    report.node_ids = frozenset(named | answered)
    report.named, report.answered = len(named), len(answered)
    return report


def _named_nodes(words: list[str], by_name: dict[str, list[str]]) -> set[str]:
    """Nodes whose whole name is a run of consecutive ``words``."""
    found: set[str] = set()
    for start in range(len(words)):
        for end in range(start + 1, min(len(words), start + MAX_NAME_WORDS) + 1):
            ids = by_name.get(" ".join(words[start:end]))
            if ids:
                found.update(ids)
    return found
