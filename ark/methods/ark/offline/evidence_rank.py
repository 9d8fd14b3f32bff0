"""Evidence-ranked answers: order candidates by what the graph says for them and show where it says nothing.

A candidate's *evidence key* counts, in this order: the question's conditions it meets, the question's anchor nodes
that support it (every node bearing a name the question uses: a disease named alike in two sources is two anchors),
first through the principal relation between their types, then through any, and the edges that link it to them.
Candidates are ordered by the key, then by weaker signals (the text relevance and specificity scores the policy
gathered, in the order given). Candidates with equal keys form a *tie group*: the graph
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


def evidence_key(*, named: bool, conditions_met: int, says_quoted: bool, support: Mapping[int, set[str]],
                 principal: Mapping[int, str | None] | None = None, paths: int = 0) -> EvidenceKey:
    """A candidate's key: bears the name asked about, says the quoted text (a condition on the answer's own text),
    conditions met, anchor nodes supporting it through the principal relation between their types (``principal``:
    anchor -> the relation of the schema linking most pairs of the two types, e.g. ``has_phenotype`` rather than
    ``has_inheritance`` between a disease and a phenotype), anchor nodes supporting it at all (``support``: anchor ->
    the relations seen linking them), edges to them, and the nodes in between through which it is linked to them
    (``paths``: an answer two hops away, e.g. a gene of two of the diseases showing the finding asked about)."""
    principal = principal or {}
    edges = sum(max(len(relations), 1) for relations in support.values())
    main = sum(1 for anchor, relations in support.items()
               if not relations or principal.get(anchor) is None or principal[anchor] in relations)
    return (int(named), int(says_quoted), conditions_met, main, len(support), edges, paths)


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


def support_note(key: EvidenceKey) -> str:
    """A short account of an evidence key: how many of the question's nodes and edges support the answer (said
    when more than one does; one node is what the reason names already), or through how many nodes in between
    a two-hop answer is linked to them."""
    if len(key) < 7:
        return ""
    anchors, edges, paths = key[4:7]
    if paths >= 2:
        return f"Evidence: linked through {paths} of the nodes in between."
    if anchors < 2:
        return ""
    return f"Evidence: {anchors} of the question's nodes, {edges} edge{'s' if edges != 1 else ''}."


def explain(reason: str, answer: RankedAnswer) -> str:
    """An answer's reason, then the graph's support for it and, in a tie group, that the graph cannot tell it
    apart from the others."""
    return " ".join(p for p in (reason, support_note(answer.key), tie_note(answer.group_size)) if p)


def doubted(level: str, reason: str, *, tied: int, unread: Sequence[str], profile: bool,
            unsaid: Sequence[str] = ()) -> tuple[str, str]:
    """A confidence lowered by what the answer cannot vouch for: parts of the question not understood (high →
    medium; medium → low unless the question is a long profile of findings, where some always go unmatched),
    quoted phrases the first answer's text does not say (``unsaid``: never high) and a first rank group of more
    than one (never high: the graph does not say which comes first)."""
    if unread:
        level = {"high": "medium", "medium": "medium" if profile else "low"}.get(level, level)
        shown = "; ".join(f"'{u}'" for u in unread[:3]) + (" and more" if len(unread) > 3 else "")
        reason = f"{reason.rstrip('.')}; not understood, so not used: {shown}."
    if level == "high" and unsaid:
        level = "medium"
        shown = ", ".join(f"'{q}'" for q in unsaid)
        reason = f"{reason.rstrip('.')}; the first answer's text does not say {shown}."
    if level == "high" and tied > 1:
        level = "medium"
        reason = f"{reason.rstrip('.')}; the first {tied} answers are tied: the graph does not distinguish them."
    return level, reason
