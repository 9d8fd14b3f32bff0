"""The answer-and-clue reward (:class:`~ark.methods.graphscout.reward.GraphScoutReward`) as a TRL reward function.

TRL calls it once per generation batch with the completions (the parsed assistant and tool messages after the
prompt), the dataset columns of each row and the rollout environments. Each rollout's trajectory is its completion
plus the calls its environment recorded; a rollout whose tool crashed scores 0. Besides the rewards it logs, per
batch, the answer F1, the clue fraction, the share of rollouts that gave an answer and the failed-tool-call rate
(GraphScout Table 5: calls that returned an error, bad arguments included, over all calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..reward import GraphScoutReward
from .environment import rollout_trajectory


class GRPORewardFunction:
    """``reward(prompts, completions, environments, answer, answer_type, clue_ids, ...) -> list[float]``."""

    __name__ = "graphscout_reward"

    def __init__(self, reward: GraphScoutReward) -> None:
        self.reward = reward
        self.batches: list[dict[str, float]] = []  # per-call summaries, newest last

    def __call__(self, prompts: Sequence[Any], completions: Sequence[list[dict[str, Any]]], *,
                 environments: Sequence[Any], answer: Sequence[str], answer_type: Sequence[str],
                 clue_ids: Sequence[list[str]], log_metric: Any = None, **_: Any) -> list[float | None]:
        """One reward per completion (TRL's reward-function contract, where None would mean "not scored")."""
        rewards, f1s, clues, answered = [], [], [], 0
        calls = failed = 0
        for completion, env, gold, kind, clue in zip(completions, environments, answer, answer_type, clue_ids,
                                                     strict=True):
            tool_messages = sum(1 for m in completion if m.get("role") == "tool")
            ok = sum(1 for c in env.calls if c.get("ok"))
            calls += tool_messages
            failed += max(0, tool_messages - ok)
            if env.crashed:
                rewards.append(0.0)
                continue
            question = {"answer": gold, "answer_type": kind, "clue_ids": clue}
            breakdown = self.reward.score(rollout_trajectory(env, completion), question)
            rewards.append(breakdown.reward)
            if breakdown.answer_f1 is not None:
                answered += 1
                f1s.append(breakdown.answer_f1)
            if breakdown.clue_fraction is not None:
                clues.append(breakdown.clue_fraction)
        summary = {"reward": _mean(rewards), "answer_f1": _mean(f1s) if f1s else 0.0,
                   "clue_fraction": _mean(clues) if clues else 0.0, "answered": answered / max(1, len(rewards)),
                   "tool_calls": calls / max(1, len(rewards)), "failed_call_rate": failed / calls if calls else 0.0,
                   "crashed": float(sum(1 for e in environments if e.crashed))}
        self.batches.append(summary)
        if log_metric is not None:
            for key in ("answer_f1", "clue_fraction", "answered", "failed_call_rate"):
                log_metric(f"graphscout/{key}", summary[key])
        return list(rewards)


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else 0.0
