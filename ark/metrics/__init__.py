"""Metrics shared by evaluation and training: STaRK ranking metrics (``ranking``) and set-level rewards."""

from .ranking import (
    HEADLINE_METRICS,
    HIT_CUTOFFS,
    METRIC_NAMES,
    RECALL_CUTOFFS,
    dedupe,
    filter_answers,
    mean_metrics,
    query_metrics,
)
from .sets import recall_any, set_f1

__all__ = [
    "HEADLINE_METRICS",
    "HIT_CUTOFFS",
    "METRIC_NAMES",
    "RECALL_CUTOFFS",
    "dedupe",
    "filter_answers",
    "mean_metrics",
    "query_metrics",
    "recall_any",
    "set_f1",
]
