"""Train / validation / test assignment by anchor: a node's split is a fixed function of the seed and its id."""

from __future__ import annotations

import hashlib

SPLITS = ("train", "val", "test")
# STaRK-Prime's proportions.
DEFAULT_FRACTIONS = (0.55, 0.20, 0.25)


def anchor_split(node_id: str, seed: int, fractions: tuple[float, float, float] = DEFAULT_FRACTIONS) -> str:
    """The split every question anchored at ``node_id`` belongs to (stable across runs and platforms)."""
    digest = hashlib.blake2b(f"{seed}\x00{node_id}".encode(), digest_size=8).digest()
    u = int.from_bytes(digest, "big") / 2**64
    cumulative = 0.0
    for name, fraction in zip(SPLITS, fractions, strict=True):
        cumulative += fraction
        if u < cumulative:
            return name
    return SPLITS[-1]
