"""Fusing the answer lists of parallel agents (the paper's Section 3.2 and Table 3).

- ``votes`` (default): concatenate the lists in agent order, rank unique nodes by how many times they occur
  (each agent's list is de-duplicated, so this is the number of agents that chose the node), ties broken by
  the earliest position in the concatenation.
- ``ordering``: concatenate in agent order and keep each node's first appearance.
- ``random``: a seeded random permutation of the union of the lists.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from .options import FUSIONS


@dataclass(frozen=True)
class FusedNode:
    """One node of a fused ranking. ``score`` decreases strictly down the ranking; for ``votes`` its integer
    ceiling is the vote count (``votes - first_position / len(L)``)."""

    index: int
    votes: int
    first_position: int
    score: float


def fuse(answers: Sequence[Sequence[int]], method: str = "votes", seed: int = 0) -> list[FusedNode]:
    """Fuse per-agent ordered answer lists with ``method`` (one of :data:`FUSIONS`)."""
    if method not in FUSIONS:
        raise ValueError(f"unknown fusion {method!r}; valid: {', '.join(FUSIONS)}")
    concatenated = [int(node) for answer in answers for node in dict.fromkeys(answer)]
    votes: dict[int, int] = {}
    first: dict[int, int] = {}
    for position, node in enumerate(concatenated):
        votes[node] = votes.get(node, 0) + 1
        first.setdefault(node, position)
    unique = list(first)  # order of first appearance = the "ordering" fusion
    if method == "votes":
        unique.sort(key=lambda n: (-votes[n], first[n]))
        length = max(len(concatenated), 1)
        return [FusedNode(n, votes[n], first[n], votes[n] - first[n] / length) for n in unique]
    if method == "random":
        random.Random(seed).shuffle(unique)
    count = len(unique)
    return [FusedNode(n, votes[n], first[n], (count - rank) / count) for rank, n in enumerate(unique)]
