"""Fusing the answer lists of parallel agents (the paper's Section 3.2 and Table 3).

- ``votes`` (default): concatenate the lists in agent order, rank unique nodes by how many times they occur
  (each agent's list is de-duplicated, so this is the number of agents that chose the node), ties broken by
  the earliest position in the concatenation. When the agents' graph evidence is known (``evidence``: a key per
  node, larger is stronger), it breaks ties within a vote group before the position does, and nodes with equal
  votes and equal evidence share a ``tie_group``: the graph does not distinguish them.
  The paper's rule (Section 3.2, Appendix A.2) reads "ties broken by the earliest position at which the node
  appears in any agent's list"; ``ties`` picks the reading: ``concatenated`` (default, ours: the position in the
  concatenation of the lists in agent order, so agent 1's whole list precedes agent 2's) or ``any_list`` (the
  smallest rank the node has within any single agent's list, the concatenated position after that).
- ``ordering``: concatenate in agent order and keep each node's first appearance.
- ``random``: a seeded random permutation of the union of the lists.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from .options import FUSION_TIES, FUSIONS


@dataclass(frozen=True)
class FusedNode:
    """One node of a fused ranking. ``score`` decreases strictly down the ranking; for ``votes`` its integer
    ceiling is the vote count (``votes - first_position / len(L)``)."""

    index: int
    votes: int
    first_position: int
    score: float
    tie_group: int = 0  # 1-based rank group; nodes sharing one are tied (0: not grouped)


def fuse(answers: Sequence[Sequence[int]], method: str = "votes", seed: int = 0,
         evidence: Mapping[int, tuple[int, ...]] | None = None, ties: str = "concatenated") -> list[FusedNode]:
    """Fuse per-agent ordered answer lists with ``method`` (one of :data:`FUSIONS`); ``evidence`` (votes only)
    breaks ties within a vote group and groups the nodes it cannot tell apart; ``ties`` (votes only, one of
    :data:`FUSION_TIES`) is the reading of "earliest position" (module docstring)."""
    if method not in FUSIONS:
        raise ValueError(f"unknown fusion {method!r}; valid: {', '.join(FUSIONS)}")
    if ties not in FUSION_TIES:
        raise ValueError(f"unknown fusion tie-break {ties!r}; valid: {', '.join(FUSION_TIES)}")
    concatenated = [int(node) for answer in answers for node in dict.fromkeys(answer)]
    votes: dict[int, int] = {}
    first: dict[int, int] = {}
    for position, node in enumerate(concatenated):
        votes[node] = votes.get(node, 0) + 1
        first.setdefault(node, position)
    unique = list(first)  # order of first appearance = the "ordering" fusion
    if method == "votes" and (evidence or ties == "any_list"):
        order = _earliest_in_any_list(answers, first) if ties == "any_list" else first
        return _fuse_with_evidence(unique, votes, first, evidence or {}, order)
    if method == "votes":
        unique.sort(key=lambda n: (-votes[n], first[n]))
        length = max(len(concatenated), 1)
        return [FusedNode(n, votes[n], first[n], votes[n] - first[n] / length, rank)
                for rank, n in enumerate(unique, start=1)]
    if method == "random":
        random.Random(seed).shuffle(unique)
    count = len(unique)
    return [FusedNode(n, votes[n], first[n], (count - rank) / count) for rank, n in enumerate(unique)]


def _earliest_in_any_list(answers: Sequence[Sequence[int]], first: dict[int, int]) -> dict[int, int]:
    """A sort position per node: its smallest rank within any one agent's list, then its concatenated position."""
    best: dict[int, int] = {}
    for answer in answers:
        for rank, node in enumerate(dict.fromkeys(int(n) for n in answer)):
            best[node] = min(best.get(node, rank), rank)
    span = len(first) + 1
    return {node: best[node] * span + position for node, position in first.items()}


def _fuse_with_evidence(unique: list[int], votes: dict[int, int], first: dict[int, int],
                        evidence: Mapping[int, tuple[int, ...]], order: Mapping[int, int]) -> list[FusedNode]:
    """Votes first, then the graph's evidence, then the position ``order`` gives; ``score`` stays below the vote
    count and decreases strictly (``votes - rank / (n + 1)``)."""

    def strength(n: int) -> tuple[int, ...]:
        return tuple(-v for v in evidence.get(n, ()))

    # A node whose evidence is unknown comes after those with evidence stated, however weak, in its vote group.
    unique = sorted(unique, key=lambda n: (-votes[n], n not in evidence, strength(n), order[n]))
    count = len(unique) + 1
    fused = [FusedNode(n, votes[n], first[n], votes[n] - rank / count) for rank, n in enumerate(unique)]
    group, grouped = 0, []
    for position, node in enumerate(fused):
        previous = fused[position - 1] if position else None
        tied = (previous is not None and node.index in evidence and previous.index in evidence
                and previous.votes == node.votes and evidence[previous.index] == evidence[node.index])
        group += 0 if tied else 1
        grouped.append(replace(node, tie_group=group))
    return grouped
