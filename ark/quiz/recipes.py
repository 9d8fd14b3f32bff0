"""Shipped benchmark recipes: a fixed configuration per graph, so the same command always writes the same file."""

from __future__ import annotations

from .generate import QuizConfig

# The HPO benchmark: 2,500 questions, STaRK-Prime-like mix (mostly 1-2 hop relational with textual constraints).
RECIPES: dict[str, QuizConfig] = {
    "hpo": QuizConfig(
        n=2500,
        seed=20240611,
        mix={
            "one_hop": 0.15,
            "one_hop_text": 0.25,
            "two_anchor": 0.15,
            "two_anchor_text": 0.10,
            "two_hop": 0.10,
            "two_hop_text": 0.25,
        },
        max_answers=20,
    ),
}


def recipe(name: str) -> QuizConfig:
    """The recipe called ``name``; ``ValueError`` lists the valid names."""
    try:
        return RECIPES[name]
    except KeyError:
        raise ValueError(f"unknown quiz recipe {name!r}; valid: {', '.join(sorted(RECIPES))}") from None
