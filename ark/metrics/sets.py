"""Metrics of an unordered retrieved set against the answer set (SeedER's Recall@Any, set F1)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable


def recall_any(retrieved: Iterable[Hashable], answers: Iterable[Hashable]) -> float:
    """Fraction of the answers found anywhere in ``retrieved`` (SeedER's RECALL@ANY); 0.0 without answers."""
    gold = set(answers)
    if not gold:
        return 0.0
    return len(gold.intersection(retrieved)) / len(gold)


def set_f1(predicted: Iterable[Hashable], answers: Iterable[Hashable]) -> float:
    """F1 of two sets; 1.0 when both are empty, 0.0 when exactly one is."""
    pred, gold = set(predicted), set(answers)
    if not pred and not gold:
        return 1.0
    common = len(pred & gold)
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)
