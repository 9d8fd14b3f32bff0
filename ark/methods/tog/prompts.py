"""Think-on-Graph's three prompts (relation pruning, entity pruning, the reasoning check; Sun et al. 2024,
Appendix E, reworded) and the optional rerank, with readers of their replies. A reader returns None when a reply
cannot be read; the search records that and goes on (:mod:`.method`)."""

from __future__ import annotations

import re

RELATION_SYSTEM = """You help search a knowledge graph for the evidence a question needs. Given the question, a topic
entity and the relations that leave it, choose the {width} relations most likely to lead to that evidence and rate
each one's contribution from 0 to 1 (the scores summing to 1). Reply with one line per chosen relation, written
exactly as listed, in the form
{{relation (Score: 0.5)}}: why"""
ENTITY_SYSTEM = """You help search a knowledge graph for the evidence a question needs. Given the question, a relation
followed from a topic entity and the candidate entities it reaches (name, type and document), rate each candidate's
contribution to answering the question from 0 to 1 (the scores summing to 1). Reply with one last line
Score: s1, s2, ...
giving one score per candidate, in the listed order."""
CHECK_SYSTEM = """Given a question and the knowledge graph paths retrieved for it as (entity, relation, entity)
triples, say whether the paths, with your own knowledge, are enough to answer the question. Reply {Yes} or {No},
then why."""
RERANK_SYSTEM = """You rank documents retrieved from a knowledge graph by how well each answers the question. Reply
with the document numbers, best first, separated by commas (for example: 3, 1, 2)."""

RELATION_SCORE = re.compile(r"\{\s*(.+?)\s*\(\s*score\s*[:=]\s*([0-9]*\.?[0-9]+)\s*\)\s*\}", re.IGNORECASE)
NUMBER = re.compile(r"[0-9]*\.?[0-9]+")


def read_relation_scores(reply: str, labels: list[str]) -> dict[str, float] | None:
    """The listed relations a reply chose and their scores (labels matched case-insensitively), or None when it
    names none of them."""
    known = {label.lower(): label for label in labels}
    chosen: dict[str, float] = {}
    for name, score in RELATION_SCORE.findall(reply or ""):
        label = known.get(name.strip().strip("\"'`").lower())
        if label is not None and label not in chosen:
            chosen[label] = float(score)
    return chosen or None


def read_entity_scores(reply: str, count: int) -> list[float] | None:
    """The ``count`` scores of the reply's last ``Score:`` line, or None when there is no such line of that many
    numbers."""
    for line in reversed((reply or "").splitlines()):
        head, _, rest = line.partition(":")
        if head.strip().strip("*").lower() == "score":
            scores = [float(s) for s in NUMBER.findall(rest)]
            return scores if len(scores) == count else None
    return None


def read_sufficient(reply: str) -> bool | None:
    """True for ``{Yes}``, False for ``{No}`` (a bare leading yes/no is read too), None when unreadable."""
    found = re.search(r"\{\s*(yes|no)\s*\}", reply or "", re.IGNORECASE) or \
        re.match(r"\W*(yes|no)\b", reply or "", re.IGNORECASE)
    return None if found is None else found.group(1).lower() == "yes"


def read_ranking(reply: str, count: int) -> list[int] | None:
    """The document positions (0-based) a rerank reply lists, first mention first, or None when it lists none."""
    positions = [int(n) - 1 for n in re.findall(r"\d+", reply or "")]
    order = list(dict.fromkeys(p for p in positions if 0 <= p < count))
    return order or None
