"""Metrics shared by evaluation and training: STaRK ranking metrics (``ranking``), set-level rewards (``sets``),
question-answering answer metrics (``answers``) and the optional LLM judge (``judge``, imported on demand)."""

from .answers import (
    ANSWER_METRICS,
    ANSWER_TYPES,
    answer_metrics,
    exact_match,
    infer_answer_type,
    mean_answer_metrics,
    normalize_answer,
    token_f1,
)
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
    "ANSWER_METRICS",
    "ANSWER_TYPES",
    "answer_metrics",
    "exact_match",
    "infer_answer_type",
    "mean_answer_metrics",
    "normalize_answer",
    "token_f1",
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
