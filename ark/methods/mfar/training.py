"""``ark train mfar``: questions → candidate pools and field scores → trained field weights → a model folder."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .fields import FieldScorers, open_field_scorers
from .model import Example, MfarSettings, save_model, train_weights

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph


def examples_for(scorers: FieldScorers, questions: Sequence[tuple[str, Sequence[int]]], candidates: int,
                 progress: Callable[[int, int], None] | None = None) -> list[Example]:
    """One example per question whose pool holds a gold node (the others cannot teach the ranking)."""
    vectors = scorers.embed([q for q, _ in questions])
    examples = []
    for i, ((query, answers), vector) in enumerate(zip(questions, vectors, strict=True)):
        pool = np.union1d(scorers.candidates(query, vector, candidates), np.asarray(answers, dtype=np.int64))
        gold = np.isin(pool, np.asarray(answers, dtype=np.int64))
        examples.append(Example(scorers.features(query, vector, pool), gold, vector.astype(np.float32)))
        if progress is not None:
            progress(i + 1, len(questions))
    return examples


def train_mfar(graph: KnowledgeGraph, questions: Sequence[tuple[str, Sequence[int]]], out: Path, settings: MfarSettings,
               log: Callable[[str], None], progress: bool = True) -> dict[str, Any]:
    """Train on ``questions`` (query, answer node indices) and write the model folder ``out``; returns the report."""
    started = time.perf_counter()
    scorers = open_field_scorers(graph, progress=progress)
    opened = time.perf_counter()

    def pools(done: int, total: int) -> None:
        if progress and (done % 200 == 0 or done == total):
            log(f"field scores: {done:,}/{total:,} questions")

    examples = examples_for(scorers, questions, settings.candidates, pools)
    featured = time.perf_counter()

    def epochs(done: int, total: int, loss: float) -> None:
        if progress:
            log(f"epoch {done}/{total} · loss {loss:.4f}")

    weights, bias, losses = train_weights(examples, settings, out, epochs)
    trained = time.perf_counter()
    report = {"train_questions": len(questions), "fields": scorers.names, "parameters": int(weights.size + bias.size),
              "seconds_fields": round(opened - started, 2), "seconds_pools": round(featured - opened, 2),
              "seconds_training": round(trained - featured, 2), "losses": losses, "seed": settings.seed}
    save_model(out, weights, bias, scorers.names, graph, settings, report)
    report["model_bytes"] = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    return report
