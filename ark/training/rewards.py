"""Rewards of one trajectory, built on the shared metrics so that training and evaluation agree.

- :func:`recall_any_reward`, :func:`set_f1_reward`: set-level rewards (SeedER);
- :func:`answer_clue_reward`: GraphScout's gated answer-and-clue reward (GraphScout §3.4.2, Eqs. 2-5)::

      r = 0                          when there is no answer (the wrapper is missing)
      r = r_ans                      when r_ans >= delta
      r = min(r_ans + r_clue, delta) otherwise

  with ``r_ans`` the answer's token F1 and ``r_clue`` the fraction of evidence nodes the trajectory touched;
  ``use_clue=False`` is the "w/o r_clue" ablation (Table 2): ``r = r_ans`` whenever there is an answer.
  How a trajectory yields ``r_ans`` and ``r_clue`` is the method's business
  (:mod:`ark.methods.graphscout.reward`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import asdict, dataclass

from ..metrics import recall_any, set_f1

__all__ = ["DEFAULT_DELTA", "AnswerClueReward", "answer_clue_reward", "recall_any_reward", "set_f1_reward"]

DEFAULT_DELTA = 0.4  # GraphScout's delta: the low-accuracy threshold and the cap of the clue-aided regime


def recall_any_reward(selected: Iterable[Hashable], answers: Iterable[Hashable]) -> float:
    """SeedER's reward: the fraction of the answer set inside the selected set (order ignored)."""
    return recall_any(selected, answers)


def set_f1_reward(predicted: Iterable[Hashable], answers: Iterable[Hashable]) -> float:
    """F1 between a predicted set and the answer set."""
    return set_f1(predicted, answers)


@dataclass(frozen=True)
class AnswerClueReward:
    """One trajectory's reward and how it was reached.

    ``case``: ``no_answer`` (no wrapper: 0), ``answer`` (``r_ans >= delta``: ``r_ans``), ``clue_bonus``
    (``min(r_ans + r_clue, delta)``) or ``answer_only`` (the clue term switched off). ``reason`` says it in words.
    """

    reward: float
    case: str
    reason: str
    answer_f1: float | None = None
    clue_fraction: float | None = None
    delta: float = DEFAULT_DELTA

    def to_dict(self) -> dict[str, float | str | None]:
        return asdict(self)


def answer_clue_reward(answer_f1: float | None, clue_fraction: float | None, *, delta: float = DEFAULT_DELTA,
                       use_clue: bool = True, missing_reason: str = "no final answer") -> AnswerClueReward:
    """GraphScout's reward from ``answer_f1`` (None: the trajectory gave no answer) and ``clue_fraction``.

    ``ValueError`` for values outside [0, 1] or a ``delta`` outside (0, 1]; ``clue_fraction`` may be None only when
    the clue term is off or there is no answer.
    """
    if not (isinstance(delta, int | float) and 0 < delta <= 1):
        raise ValueError(f"delta must be in (0, 1], got {delta!r}")
    if answer_f1 is None:
        return AnswerClueReward(0.0, "no_answer", f"reward 0: {missing_reason}", None, clue_fraction, delta)
    _check_fraction("answer_f1", answer_f1)
    if not use_clue:
        return AnswerClueReward(float(answer_f1), "answer_only",
                                f"answer F1 {answer_f1:.3f} (clue term off)", answer_f1, clue_fraction, delta)
    if clue_fraction is None:
        raise ValueError("clue_fraction is needed when the clue term is on (use_clue=True)")
    _check_fraction("clue_fraction", clue_fraction)
    if answer_f1 >= delta:
        return AnswerClueReward(float(answer_f1), "answer",
                                f"answer F1 {answer_f1:.3f} >= delta {delta:g}: the answer alone counts",
                                answer_f1, clue_fraction, delta)
    reward = min(answer_f1 + clue_fraction, delta)
    return AnswerClueReward(float(reward), "clue_bonus",
                            f"answer F1 {answer_f1:.3f} < delta {delta:g}: min(F1 + clue fraction "
                            f"{clue_fraction:.3f}, delta) = {reward:.3f}", answer_f1, clue_fraction, delta)


def _check_fraction(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1):
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
