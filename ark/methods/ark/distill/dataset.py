"""Distillation datasets from teacher runs: retrieval records → train/validation chat files and their statistics.

Label-free (paper §3.3): every teacher trajectory becomes a sample, whatever its answer. The validation subset is
made of whole questions (all trajectories of a question land on the same side), drawn with a seed, so the validation
loss measures held-out questions rather than siblings of training trajectories. Token statistics need a tokenizer
(the ``train`` extra); everything else is plain Python.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ....storage.atomic import atomic_write_text
from ....training.datasets import chat_statistics, record_trajectories, write_chat_dataset

if TYPE_CHECKING:
    from ....runtime.records import Trajectory

TRAIN_FILE = "train.jsonl"
VALIDATION_FILE = "validation.jsonl"
STATISTICS_FILE = "statistics.json"


def split_by_question(records: Sequence[Mapping[str, object]], validation_questions: int = 200,
                      seed: int = 0) -> tuple[list[Mapping[str, object]], list[Mapping[str, object]]]:
    """``(train, validation)`` records: ``validation_questions`` distinct questions, drawn with ``seed``, go to
    validation with all their records; input order is kept on both sides."""
    questions = list(dict.fromkeys(record["question"] for record in records))
    if validation_questions < 0:
        raise ValueError(f"validation_questions must be >= 0, got {validation_questions}")
    if validation_questions and validation_questions >= len(questions):
        raise ValueError(f"validation_questions={validation_questions} leaves no training question: the records "
                         f"hold {len(questions)} distinct questions")
    held_out = set(random.Random(seed).sample(questions, validation_questions))
    train = [r for r in records if r["question"] not in held_out]
    validation = [r for r in records if r["question"] in held_out]
    return train, validation


def token_statistics(samples: Sequence[Mapping[str, object]], tokenizer: object,
                     max_length: int | None = None) -> dict[str, object]:
    """Tokens per sample under the training template: total, trained (assistant) tokens, mean, longest, and how
    many samples exceed ``max_length``."""
    from ....training.sft import trained_token_mask, training_chat_template

    template = training_chat_template(tokenizer)
    lengths, trained = [], 0
    for sample in samples:
        ids, mask = trained_token_mask(sample, tokenizer, template)
        lengths.append(len(ids))
        trained += sum(mask)
    out: dict[str, object] = {"tokens": sum(lengths), "trained_tokens": trained,
                           "mean_tokens": round(sum(lengths) / len(lengths), 1) if lengths else 0.0,
                           "max_tokens": max(lengths, default=0)}
    if max_length is not None:
        out["max_length"] = max_length
        out["over_max_length"] = sum(length > max_length for length in lengths)
    return out


def write_distillation_dataset(records: Sequence[Mapping[str, object]], out_dir: str | Path, *,
                               validation_questions: int = 200, seed: int = 0, include_system: bool = True,
                               tokenizer: object = None, max_length: int | None = None,
                               keep: Callable[[Mapping[str, object], Trajectory], bool] | None = None
                               ) -> dict[str, object]:
    """Write ``train.jsonl``, ``validation.jsonl`` (when any) and ``statistics.json`` under ``out_dir`` from teacher
    retrieval records (``Retrieval.to_dict()`` or eval ``trajectories.jsonl`` lines); return the statistics. Each
    file is written atomically.

    ``keep(record, trajectory)``: an opt-in filter (e.g. on correctness); by default every trajectory is kept
    (label-free). The split by question happens before filtering, so the filter never moves a question across.
    """
    train, validation = split_by_question(records, validation_questions, seed)
    out = Path(out_dir)
    statistics: dict[str, object] = {"seed": seed, "include_system": include_system, "filtered": keep is not None}
    for name, part, file_name in (("train", train, TRAIN_FILE), ("validation", validation, VALIDATION_FILE)):
        samples, dropped = [], 0
        for record in part:
            for trajectory in record_trajectories(record):
                if keep is None or keep(record, trajectory):
                    samples.append(trajectory.to_sft_sample(include_system))
                else:
                    dropped += 1
        target = out / file_name
        if not samples:
            target.unlink(missing_ok=True)  # a stale file from an earlier export must not be trained on
            continue
        write_chat_dataset(target, samples)
        summary = chat_statistics(samples)
        summary["questions"] = len({record["question"] for record in part})
        if keep is not None:
            summary["dropped_by_filter"] = dropped
        if tokenizer is not None:
            summary["tokens"] = token_statistics(samples, tokenizer, max_length)
        statistics[name] = summary
    if "train" not in statistics:
        raise ValueError("the records hold no trajectory to train on" + (" after filtering" if keep else ""))
    atomic_write_text(out / STATISTICS_FILE, json.dumps(statistics, indent=2) + "\n")
    return statistics
