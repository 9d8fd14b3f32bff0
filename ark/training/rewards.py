"""Rewards of one trajectory, built on the shared metrics so that training and evaluation agree."""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from ..metrics import recall_any, set_f1

__all__ = ["recall_any_reward", "set_f1_reward"]


def recall_any_reward(selected: Iterable[Hashable], answers: Iterable[Hashable]) -> float:
    """SeedER's reward: the fraction of the answer set inside the selected set (order ignored)."""
    return recall_any(selected, answers)


def set_f1_reward(predicted: Iterable[Hashable], answers: Iterable[Hashable]) -> float:
    """F1 between a predicted set and the answer set."""
    return set_f1(predicted, answers)
