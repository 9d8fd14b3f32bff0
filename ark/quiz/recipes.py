"""Shipped benchmark recipes: a fixed configuration per graph, so the same command always writes the same file."""

from __future__ import annotations

from .generate import STARK_PRIME_MIX, QuizConfig

# The HPO benchmark: 2,500 questions, STaRK-Prime-like mix (mostly 1-2 hop relational with textual constraints).
RECIPES: dict[str, QuizConfig] = {
    "hpo": QuizConfig(
        n=2500,
        seed=20240611,
        mix=dict(STARK_PRIME_MIX),
        max_answers=20,
    ),
}


def recipe(name: str) -> QuizConfig:
    """The recipe called ``name``; ``ValueError`` lists the valid names."""
    try:
        return RECIPES[name]
    except KeyError:
        from .lookup import LOOKUP_RECIPES
        from .shapes import SHAPE_RECIPES

        valid = ", ".join(sorted([*RECIPES, *LOOKUP_RECIPES, *SHAPE_RECIPES]))
        raise ValueError(f"unknown quiz recipe {name!r}; valid: {valid}") from None
