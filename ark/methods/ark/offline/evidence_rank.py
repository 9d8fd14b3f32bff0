"""Evidence-ranked answers: order candidates by what the graph says for them and show where it says nothing.

A candidate's *evidence key* counts, in this order: the question's conditions it meets, the question's anchor nodes
that support it (every node bearing a name the question uses: a disease named alike in two sources is two anchors),
and the edges that link it to them. Candidates are ordered by the key, then by weaker signals (the text relevance and
specificity scores the policy gathered, in the order given). Candidates with equal keys form a *tie group*: the graph
does not distinguish them, and the answer says so instead of presenting their order as knowledge.

Pure functions: the policy gathers the evidence, these order and group it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

EvidenceKey = tuple[int, ...]  # larger is stronger; compared component by component


@dataclass(frozen=True)
class RankedAnswer:
    """One answer of an evidence ranking: its node, its key, its tie group (1-based) and that group's size."""

    index: int
    key: EvidenceKey
    tie_group: int
    group_size: int


def order_by_evidence(candidates: Sequence[int], key: Callable[[int], EvidenceKey]) -> list[int]:
    """``candidates`` (given best first by weaker signals) reordered by their evidence key, strongest first; the
    given order decides within equal keys."""
    position = {node: n for n, node in enumerate(candidates)}
    return sorted(dict.fromkeys(candidates), key=lambda node: (tuple(-v for v in key(node)), position[node]))


def tie_groups(ranked: Sequence[int], keys: Mapping[int, EvidenceKey]) -> list[RankedAnswer]:
    """Consecutive answers with equal keys share a tie group; a node with no key is a group of its own."""
    out: list[RankedAnswer] = []
    sizes: list[int] = []
    previous: EvidenceKey | None = None
    for node in ranked:
        current = keys.get(node)
        if out and current is not None and current == previous:
            sizes[-1] += 1
        else:
            sizes.append(1)
        out.append(RankedAnswer(node, current or (), len(sizes), 0))
        previous = current
    return [RankedAnswer(a.index, a.key, a.tie_group, sizes[a.tie_group - 1]) for a in out]


def top_tie(answers: Sequence[RankedAnswer]) -> int:
    """How many answers share the first rank group (0 for no answer)."""
    return answers[0].group_size if answers else 0


def tie_note(group_size: int) -> str:
    """The words an answer's evidence carries when its group holds others: ``tied with N: ...``."""
    if group_size <= 1:
        return ""
    return f"Tied with {group_size - 1}: the graph does not distinguish them."


def support_note(anchors: int, edges: int, conditions: int = 0) -> str:
    """A short account of an evidence key: how many anchor nodes and edges support the answer."""
    parts = []
    if conditions:
        parts.append(f"{conditions} condition{'s' if conditions != 1 else ''} met")
    if anchors:
        parts.append(f"{anchors} of the question's nodes, {edges} edge{'s' if edges != 1 else ''}")
    return "Evidence: " + "; ".join(parts) + "." if parts else ""
