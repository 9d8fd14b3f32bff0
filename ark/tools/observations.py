"""The text the model sees after each tool call, and a parser for its node lines.

Formats (stable: the offline policy and trajectory analysis parse them with :func:`parse_node_lines`):

``search_in_graph``::

    Found 2 nodes for query: 'seizure':

    [12] Seizure (phenotype) - Score: 7.314
        Context: ...recurrent **seizures** of ...
    [40] Febrile seizure (phenotype) - Score: 5.102

    (empty result) No nodes found for query: 'xyz'

``search_in_neighborhood``::

    Search around [12] Seizure (phenotype) (query='x', node_type=disease, edge_type=has_phenotype) found 57 results:

    1. [456] Epilepsy (disease) <-has_phenotype-
        Context: ...
    2. -is_a-> [3] Abnormality of the nervous system (phenotype)

    (Showing 20 of 57 results. You may want to refine your search.)

A neighbor line is ``<rank>. [-rel->] [index] name (type) [<-rel-]``: ``-rel->`` before the node marks edges from
the centre to it, ``<-rel-`` after it edges from it to the centre; several relations are comma-joined.

``add_to_answer``: ``Added the following nodes to the answer:`` then ``- [index] name (type)`` lines, each followed by
``  Reasoning: ...``. Every node line of every tool contains ``[<index>] <name> (<type>)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NODE_LINE = re.compile(
    r"^\s*(?:\d+\.\s+|-\s+)?"
    r"(?:-(?P<out>[^>\n]+?)->\s+)?"
    r"\[(?P<index>\d+)\]\s+(?P<name>.*?)\s+\((?P<type>[^()\n]*)\)"
    r"(?:\s+<-(?P<inc>[^\n]+?)-)?"
    r"(?:\s+-\s+Score:\s+(?P<score>[-+0-9.eE]+))?\s*$"
)


@dataclass(frozen=True)
class ParsedNode:
    """One node line of an observation."""

    index: int
    name: str
    type: str
    out_relations: tuple[str, ...] = ()
    in_relations: tuple[str, ...] = ()
    score: float | None = None

    @property
    def relation_info(self) -> str:
        """The relation markers as shown, e.g. ``-is_a-> / <-has_phenotype-`` ('' for global results)."""
        parts = []
        if self.out_relations:
            parts.append(f"-{','.join(self.out_relations)}->")
        if self.in_relations:
            parts.append(f"<-{','.join(self.in_relations)}-")
        return " / ".join(parts)


def _split(relations: str | None) -> tuple[str, ...]:
    return tuple(r.strip() for r in relations.split(",")) if relations else ()


def parse_node_lines(text: str) -> list[ParsedNode]:
    """Every ``[index] name (type)`` line of an observation, in order (header lines are skipped)."""
    out: list[ParsedNode] = []
    for line in text.splitlines():
        if line.startswith(("Search around", "Found ")):
            continue
        match = _NODE_LINE.match(line)
        if match is None:
            continue
        score = match.group("score")
        out.append(ParsedNode(int(match.group("index")), match.group("name"), match.group("type"),
                              _split(match.group("out")), _split(match.group("inc")),
                              float(score) if score is not None else None))
    return out


def clean_inline(text: str, limit: int) -> str:
    """One line, whitespace collapsed, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: max(limit - 3, 1)].rstrip() + "..."


def node_label(index: int, name: str, node_type: str, name_limit: int) -> str:
    """``[index] name (type)``; brackets in names are kept, line breaks are not."""
    return f"[{index}] {clean_inline(name, name_limit) or '(no name)'} ({node_type})"


def snippet(text: str, terms: list[str], width: int) -> str | None:
    """``...before **term** after...`` around the first occurrence of any term (word-prefix, case-insensitive)."""
    if not text or not terms:
        return None
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(t) for t in sorted(set(terms), key=len, reverse=True))
                         + r")\w*", re.IGNORECASE)
    flat = " ".join(text.split())
    match = pattern.search(flat)
    if match is None:
        return None
    word = match.group(0)[: max(width // 2, 10)]
    side = max((width - len(word)) // 2, 0)
    start, end = max(match.start() - side, 0), min(match.end() + side, len(flat))
    before, after = flat[start: match.start()], flat[match.end(): end]
    return ("..." if start > 0 else "") + f"{before}**{word}**{after}" + ("..." if end < len(flat) else "")


def count_of(count: int, noun: str) -> str:
    """``"1 node"``, ``"3 nodes"``: a count with its noun in the right number (nouns here take a plain -s)."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def fit_lines(lines: list[str], footer: list[str], limit: int) -> str:
    """Join ``lines`` then ``footer``, dropping trailing result lines so the text stays within ``limit``."""
    note = f"(Output cut to {limit} characters.)"
    text = "\n".join(lines + footer)
    if len(text) <= limit:
        return text
    budget = limit - len("\n".join(footer)) - len(note) - 2
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join([*kept, note, *footer])[:limit]
