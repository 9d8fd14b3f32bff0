"""STaRK retrieval metrics on ranked lists of node ids, in numpy.

Semantics follow STaRK's evaluator with torchmetrics <= 1.7.3 (see ``docs`` / ``shared/reference/stark.md`` §3):

- ``hit@k``: 1 if any answer is among the first ``k`` ranked nodes.
- ``recall@k``: answers in the first ``k`` divided by **all** answers, even when there are more than ``k``.
- ``mrr``: 1 / rank of the first answer over the whole returned ranking (no cutoff); 0 if none was returned.
- A query without any (valid) answer scores 0 on every metric and still counts in the mean.
- A node repeated in a ranking counts once, at its first position.
- Answers that are not candidates (not in the graph, or outside the candidate node types) are dropped before
  scoring, as STaRK drops non-candidate answers; :func:`filter_answers` reports how many.

One deliberate difference from STaRK: STaRK ranks every candidate, giving nodes a method did not return a tied
filler score, so an answer outside the returned list can still add a tiny ``1/(n+r)`` to MRR or land in the top-k
when fewer than ``k`` nodes were returned. Here a node that was not returned is simply not retrieved.

``truncate=20`` reproduces the ARK paper (Appendix A.2): the fused ranking is cut to its first 20 nodes before
every metric, so MRR is 0 when no answer is in the top 20.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np

NodeId = TypeVar("NodeId", bound=Hashable)  # a node id (a string, or an int index inside one graph)

HIT_CUTOFFS = (1, 5, 10, 20)
RECALL_CUTOFFS = (5, 10, 20)
METRIC_NAMES: tuple[str, ...] = (
    *(f"hit@{k}" for k in HIT_CUTOFFS),
    *(f"recall@{k}" for k in RECALL_CUTOFFS),
    "mrr",
)
HEADLINE_METRICS: tuple[str, ...] = ("hit@1", "hit@5", "recall@20", "mrr")


def dedupe(ranked: Iterable[NodeId]) -> list[NodeId]:
    """The ranking with repeated nodes removed, each kept at its first position."""
    return list(dict.fromkeys(ranked))


def filter_answers(answers: Iterable[str], is_candidate: Callable[[str], bool]) -> tuple[list[str], int]:
    """Keep the distinct answers that are candidates; return them and how many answer entries were dropped."""
    answers = list(answers)
    kept = [a for a in dict.fromkeys(answers) if is_candidate(a)]
    dropped = sum(1 for a in answers if not is_candidate(a))
    return kept, dropped


def query_metrics(ranked: Sequence[NodeId], answers: Iterable[NodeId], truncate: int | None = None
                  ) -> dict[str, float]:
    """All metrics of one query: ``ranked`` node ids best first, ``answers`` the valid (candidate) answer ids."""
    if truncate is not None and truncate < 1:
        raise ValueError(f"truncate must be a positive number of nodes or None, got {truncate!r}")
    gold = set(answers)
    ranking = dedupe(ranked)
    if truncate is not None:
        ranking = ranking[:truncate]
    if not gold:
        return dict.fromkeys(METRIC_NAMES, 0.0)
    relevant = np.fromiter((node in gold for node in ranking), dtype=bool, count=len(ranking))
    # found[k-1] = number of answers among the first k nodes (padded so any cutoff can be read off).
    longest = max(max(HIT_CUTOFFS), max(RECALL_CUTOFFS), len(ranking))
    found = np.zeros(longest, dtype=np.int64)
    if len(ranking):
        found[: len(ranking)] = np.cumsum(relevant)
        found[len(ranking):] = found[len(ranking) - 1]
    result: dict[str, float] = {}
    for k in HIT_CUTOFFS:
        result[f"hit@{k}"] = float(found[k - 1] > 0)
    for k in RECALL_CUTOFFS:
        result[f"recall@{k}"] = float(found[k - 1]) / len(gold)
    hits = np.flatnonzero(relevant)
    result["mrr"] = 1.0 / (hits[0] + 1) if len(hits) else 0.0
    return {name: result[name] for name in METRIC_NAMES}


def mean_metrics(per_query: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Plain mean over queries of each metric (STaRK's ``eval_csv[...].mean()``); zeros for no queries."""
    rows = list(per_query)
    if not rows:
        return dict.fromkeys(METRIC_NAMES, 0.0)
    table = np.array([[row[name] for name in METRIC_NAMES] for row in rows], dtype=np.float64)
    return dict(zip(METRIC_NAMES, table.mean(axis=0).tolist(), strict=True))
