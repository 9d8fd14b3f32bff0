"""Writing a quiz: atomic JSONL files (all questions, and one file per split), and its summary table."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..storage.jsonl import write_jsonl_atomic
from .splits import SPLITS
from .templates import TEMPLATES


def write_splits(records: list[dict[str, Any]], directory: str | Path) -> dict[str, Path]:
    """``train.jsonl``, ``val.jsonl`` and ``test.jsonl`` in ``directory``, by each record's ``split``."""
    directory = Path(directory)
    return {name: write_jsonl_atomic(directory / f"{name}.jsonl", [r for r in records if r["split"] == name])
            for name in SPLITS}


@dataclass(frozen=True)
class TemplateRow:
    """Answer-set statistics of one template (or of all, as ``template="all"``)."""

    template: str
    count: int
    mean_answers: float
    median_answers: float
    max_answers: int
    per_split: dict[str, int]


def template_table(records: list[dict[str, Any]]) -> list[TemplateRow]:
    """One row per template present, in the canonical template order, then a total row."""
    rows = []
    groups = [(t, [r for r in records if r["template"] == t]) for t in TEMPLATES]
    groups.append(("all", records))
    for name, group in groups:
        if not group:
            continue
        sizes = np.asarray([len(r["answer_ids"]) for r in group])
        per_split = {s: sum(r["split"] == s for r in group) for s in SPLITS}
        rows.append(TemplateRow(name, len(group), float(sizes.mean()), float(np.median(sizes)), int(sizes.max()),
                                per_split))
    return rows
