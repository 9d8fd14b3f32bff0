"""Deterministic top-k selection: highest score first, ties broken by lower id."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

EMPTY_IDS = np.zeros(0, dtype=np.int64)
EMPTY_SCORES = np.zeros(0, dtype=np.float32)


def top_k(ids: NDArray[np.int32 | np.int64], scores: NDArray[np.float32 | np.float64], k: int
          ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """The ``k`` best ``(ids, scores)`` pairs, descending by score, ties by ascending id.

    ``np.argpartition`` finds the k-th best score in linear time; every candidate tied with it is kept so the
    tie-break by id is exact, then only that short list is fully sorted.
    """
    n = len(scores)
    if k <= 0 or n == 0:
        return EMPTY_IDS, EMPTY_SCORES
    if k < n:
        kth = scores[np.argpartition(-scores, k - 1)[:k]].min()
        keep = np.flatnonzero(scores >= kth)
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:k]
    return ids[order].astype(np.int64, copy=False), scores[order].astype(np.float32, copy=False)


def top_k_dense(scores: NDArray[np.float32 | np.float64], k: int, stride: int = 16
                ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Top-``k`` positive entries of a dense score array (ids are positions), as :func:`top_k`.

    Exact shortcut for large arrays: the k-th best score of every ``stride``-th entry is a lower bound on the
    k-th best overall, so the true top-k all lie among the entries reaching it; only those (about
    ``k * stride``) are ranked instead of every nonzero entry.
    """
    if k <= 0 or len(scores) == 0:
        return EMPTY_IDS, EMPTY_SCORES
    threshold = np.float32(0)
    if len(scores) > 8 * k * stride:
        sample = scores[::stride]
        # Only positive entries can bound the k-th best from below; selecting among them alone also avoids
        # np.partition on mostly-zero input, which was 10x slower than on distinct values.
        positive = sample[sample > 0]
        if len(positive) >= k:
            threshold = np.partition(positive, len(positive) - k)[len(positive) - k]
    ids = np.flatnonzero(scores >= threshold) if threshold > 0 else np.flatnonzero(scores > 0)
    return top_k(ids, scores[ids], k)
