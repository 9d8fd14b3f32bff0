"""Groups of rollouts per question and their advantages (group-relative policy gradients).

A *group* is the M trajectories sampled for one question. SeedER centres each reward on its group's mean
(REINFORCE with a group baseline); GRPO also divides by the group's standard deviation (GraphScout, Eq. 8).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ADVANTAGE_MODES = ("centred", "normalised", "none", "greedy")


@dataclass
class Rollout:
    """One sampled trajectory: what it selected or answered, its reward and anything the trainer keeps."""

    question_id: str
    reward: float
    payload: dict[str, Any] = field(default_factory=dict)


def group_advantages(rewards: Sequence[float] | np.ndarray, mode: str = "centred", baseline: float | None = None,
                     eps: float = 1e-6) -> np.ndarray:
    """Advantages of one group's rewards.

    ``centred``: r − mean(r) (SeedER); ``normalised``: (r − mean) / (std + eps) (GRPO); ``none``: r itself (plain
    REINFORCE, the "no baseline" ablation); ``greedy``: r − ``baseline`` where ``baseline`` is the reward of a
    greedy rollout of the same question (the "greedy baseline" ablation).
    """
    values = np.asarray(rewards, dtype=np.float64)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError(f"a group needs a non-empty 1-D list of rewards, got shape {values.shape}")
    if mode == "centred":
        return values - values.mean()
    if mode == "normalised":
        return (values - values.mean()) / (values.std() + eps)
    if mode == "none":
        return values.copy()
    if mode == "greedy":
        if baseline is None:
            raise ValueError("mode='greedy' needs the greedy rollout's reward as baseline")
        return values - float(baseline)
    raise ValueError(f"unknown advantage mode {mode!r}; valid: {', '.join(ADVANTAGE_MODES)}")


def group_by_question(rollouts: Sequence[Rollout]) -> dict[str, list[Rollout]]:
    """Rollouts grouped by question, in first-seen order."""
    groups: dict[str, list[Rollout]] = {}
    for rollout in rollouts:
        groups.setdefault(rollout.question_id, []).append(rollout)
    return groups
