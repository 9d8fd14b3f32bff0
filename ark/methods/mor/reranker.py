"""MoR's Organizing stage: the structure-aware reranker (Lei et al. 2025, §3.3; Yoega/MoR ``PathReranker``) and its
training.

Each candidate is three encodings, each a linear layer (or embedding) and a ReLU, concatenated, then two linear
layers to a score: its score vector (here the :data:`.reasoning.FEATURES`, standardised with the training pools'
mean and spread; the paper's is the text retriever's scores along the path), its trajectory's text (the paper embeds
the path's node types with a language model; we learn an embedding of the best route's signature, hashed into
``buckets``) and its symbolic encoding (the path's length). Training is the paper's: for each answer in a training
question's pool, a cross-entropy over it and ``negatives`` of the pool's other candidates drawn with replacement;
the epoch with the best validation MRR is kept. Needs torch (the ``mor`` extra)."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .reasoning import FEATURES


@dataclass
class Example:
    """A training question's pool as arrays: features, route buckets, hop counts and which nodes are answers."""

    features: np.ndarray
    buckets: np.ndarray
    hops: np.ndarray
    answers: np.ndarray  # bool


def bucket(signature: str, buckets: int) -> int:
    """A route signature's embedding row (CRC-32: stable across processes, unlike ``hash``)."""
    return zlib.crc32(signature.encode("utf-8")) % buckets


def network(buckets: int, width: int) -> Any:
    """The reranker network (a torch module)."""
    import torch
    from torch import nn

    class PathReranker(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.score_vector = nn.Linear(len(FEATURES), width)
            self.trajectory = nn.Embedding(buckets, width)
            self.symbolic = nn.Embedding(MAX_HOPS_CODE + 1, width)
            self.fc1 = nn.Linear(3 * width, 1)
            self.fc2 = nn.Linear(1, 1)

        def forward(self, features: Any, routes: Any, hops: Any) -> Any:
            parts = [torch.relu(self.score_vector(features)), torch.relu(self.trajectory(routes)),
                     torch.relu(self.symbolic(hops))]
            return self.fc2(self.fc1(torch.cat(parts, dim=-1))).squeeze(-1)

    return PathReranker()


MAX_HOPS_CODE = 3


def scores(model: Any, features: np.ndarray, buckets: np.ndarray, hops: np.ndarray, mean: np.ndarray,
           spread: np.ndarray) -> np.ndarray:
    """The reranker's score of each candidate of one pool."""
    import torch

    with torch.no_grad():
        x = torch.from_numpy((features - mean) / spread).float()
        return model(x, torch.from_numpy(buckets).long(), torch.from_numpy(hops).long()).numpy()


def train_epoch(model: Any, optimiser: Any, examples: list[Example], mean: np.ndarray, spread: np.ndarray,
                batch_size: int, negatives: int, rng: np.random.Generator) -> float:
    """One epoch over every (question, answer in its pool) pair; the mean loss."""
    import torch

    pairs = [(e, int(p)) for e in examples for p in np.flatnonzero(e.answers)]
    order = rng.permutation(len(pairs))
    losses = []
    for start in range(0, len(order), batch_size):
        chosen = [pairs[i] for i in order[start:start + batch_size]]
        rows = []
        for example, positive in chosen:
            wrong = np.flatnonzero(~example.answers)
            rows.append(np.concatenate([[positive], rng.choice(wrong, size=negatives, replace=True)]))
        features = np.stack([(e.features[r] - mean) / spread for (e, _), r in zip(chosen, rows, strict=True)])
        routes = np.stack([e.buckets[r] for (e, _), r in zip(chosen, rows, strict=True)])
        hops = np.stack([e.hops[r] for (e, _), r in zip(chosen, rows, strict=True)])
        logits = model(torch.from_numpy(features).float(), torch.from_numpy(routes).long(),
                       torch.from_numpy(hops).long())
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(chosen), dtype=torch.long))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return float(np.mean(losses)) if losses else 0.0


def standardiser(examples: list[Example]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and spread (standard deviation, 1 where a feature is constant) of the training features."""
    stacked = np.concatenate([e.features for e in examples]) if examples else np.zeros((1, len(FEATURES)))
    spread = stacked.std(axis=0)
    return stacked.mean(axis=0).astype(np.float32), np.where(spread > 1e-6, spread, 1.0).astype(np.float32)


def parameter_count(model: Any) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def fit(model: Any, optimiser: Any, examples: list[Example], validate: Callable[[Any], float], epochs: int,
        start: dict[str, Any], save: Callable[[dict[str, Any]], None], report: Callable[[int, float, float], None],
        batch_size: int, negatives: int, seed: int, mean: np.ndarray, spread: np.ndarray) -> dict[str, Any]:
    """Train from the checkpoint ``start`` (empty: from scratch) to ``epochs``, saving after each epoch; returns the
    final state (best epoch, its validation MRR and weights, per-epoch history)."""
    import copy

    import torch

    state = dict(start) or {"epoch": 0, "best_epoch": 0, "best_mrr": -1.0, "best_weights": None, "history": []}
    for epoch in range(state["epoch"] + 1, epochs + 1):
        rng = np.random.default_rng([seed, epoch])
        torch.manual_seed(seed * 100_003 + epoch)
        model.train()
        loss = train_epoch(model, optimiser, examples, mean, spread, batch_size, negatives, rng)
        model.eval()
        mrr = validate(model)
        if mrr > state["best_mrr"]:
            state.update(best_epoch=epoch, best_mrr=mrr, best_weights=copy.deepcopy(model.state_dict()))
        state["history"].append({"epoch": epoch, "loss": loss, "val_mrr": mrr})
        state["epoch"] = epoch
        save({**state, "weights": model.state_dict(), "optimiser": optimiser.state_dict()})
        report(epoch, loss, mrr)
    return state
