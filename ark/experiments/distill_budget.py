"""ARK's Table 5 / Figure 4 at a tiny size: the same ARK loop under backbones of two sizes, untrained and distilled
from teacher trajectories of two budgets (``ark experiment distill-budget GRAPH -q FILE``).

The teacher is the offline policy (no model here: the paper's is GPT-4.1): its trajectories on the first
``budgets[i]`` training questions (every agent's trajectory, assistant tokens only, no labels) fine-tune each
student. The students are tiny random-weight Qwen3 models built from a config with a tokenizer trained offline on
the teacher's chats ("tiny-S", "tiny-L": the paper's Qwen3-4B and -8B), the base rows are the same models
untrained. Every row answers the test questions through ARK with greedy decoding. The figures are a pipeline check
of a tiny model, not a model result; the paper's Table 5 (PRIME) is printed beside each row it corresponds to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .paper_secondary import ARK_TABLE_5, ARK_TABLE_5_HEADERS, ARK_TABLE_5_METRICS
from .report import Figure, Report, Table

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query
    from ..methods.ark.options import ArkOptions

# Our tiny students and the paper's backbone each stands for.
STUDENTS = {"tiny-S": ("Qwen3-4B", 64, 16), "tiny-L": ("Qwen3-8B", 128, 32)}  # hidden size, head dimension
PAPER_BUDGETS = (600, 6000)  # training queries per graph (Table 5's -600 and -6000 students)


@dataclass(frozen=True)
class BackboneRow:
    """One backbone on the test questions: ours (its metrics, the teacher trajectories it learnt from), and the
    paper's Table 5 row it stands for."""

    label: str
    metrics: dict[str, float]
    trajectories: int
    paper_row: str


def score(graph: KnowledgeGraph, runs: Sequence[Any], queries: Sequence[Query]) -> dict[str, float]:
    """Mean Table 5 metrics of ARK's fused rankings."""
    from ..metrics.ranking import query_metrics

    rows = [query_metrics(run.fused_ids, [graph.index_of(a) for a in q.answer_ids]) for run, q in
            zip(runs, queries, strict=True)]
    return {m: float(np.mean([r[m] for r in rows])) for m in ARK_TABLE_5_METRICS}


def teacher_samples(graph: KnowledgeGraph, queries: Sequence[Query], options: ArkOptions) -> list[dict[str, Any]]:
    """The offline teacher's chat samples on ``queries`` (one per agent trajectory)."""
    from ..methods.ark.api import ARK
    from ..training.datasets import record_sft_samples

    runs = ARK(graph, config=options).retrieve_many([q.query for q in queries], concurrency=1)
    return [s for run in runs for s in record_sft_samples(run.to_dict())]


def run_backbones(graph: KnowledgeGraph, train: Sequence[Query], test: Sequence[Query], options: ArkOptions,
                  budgets: Sequence[int], work: Path, sft: dict[str, Any], max_new_tokens: int, seed: int = 0
                  ) -> list[BackboneRow]:
    """The teacher, then per student size its base and its distilled students, each through ARK on ``test``."""
    from ..llm.local_backend import LocalChatClient
    from ..methods.ark.api import ARK
    from ..training.datasets import write_chat_dataset
    from ..training.sft import SFTSettings, train_sft
    from ..training.tiny_model import TinyModelSpec, build_tiny_model

    teacher_runs = ARK(graph, config=options).retrieve_many([q.query for q in test], concurrency=1)
    rows = [BackboneRow("offline policy (teacher)", score(graph, teacher_runs, test), 0, "GPT-4.1")]
    samples = {b: teacher_samples(graph, train[:b], options) for b in budgets}
    for budget in budgets:
        write_chat_dataset(work / f"teacher-{budget}.jsonl", samples[budget])
    for name, (paper, hidden, head) in STUDENTS.items():
        spec = TinyModelSpec(hidden_size=hidden, head_dim=head, vocab_size=2048, tokenizer_cross_words=True)
        base = build_tiny_model(work / f"{name}-base", samples=samples[max(budgets)], spec=spec, seed=seed)
        students = [("base", base, 0, paper)]
        for budget, paper_budget in zip(sorted(budgets), PAPER_BUDGETS, strict=False):
            result = train_sft(work / f"teacher-{budget}.jsonl", base, work / f"{name}-{budget}",
                               SFTSettings(**{"lora": False, "seed": seed, "progress": False,
                                              "early_stopping_patience": None, **sft}))
            students.append((f"{budget} questions", Path(result.weights_dir), len(samples[budget]),
                             f"{paper}-{paper_budget}"))
        for what, folder, trajectories, paper_row in students:
            client = LocalChatClient(folder, temperature=0.0, max_new_tokens=max_new_tokens)
            runs = ARK(graph, llm=client, config=options).retrieve_many([q.query for q in test], concurrency=1)
            rows.append(BackboneRow(f"{name} {what}", score(graph, runs, test), trajectories, paper_row))
    return rows


def distill_report(rows: Sequence[BackboneRow], *, name: str, questions: int, setting: Sequence[str],
                   out: Path | None = None, charts: bool = False) -> Report:
    """Ours (×100) beside the paper's Table 5 PRIME row each backbone stands for; with ``charts`` Figure 4's bars."""
    columns = ["backbone (ours)", "trajectories", *ARK_TABLE_5_HEADERS, "paper row",
               *(f"paper {h} (PRIME)" for h in ARK_TABLE_5_HEADERS)]
    body = [[r.label, str(r.trajectories), *(f"{100 * r.metrics[m]:.2f}" for m in ARK_TABLE_5_METRICS), r.paper_row,
             *(f"{v:.2f}" for v in ARK_TABLE_5[r.paper_row]["PRIME"])] for r in rows]
    table = Table("distill_budget", f"ARK under each backbone: {name}, {questions} test questions (tiny models, "
                  "offline teacher; a pipeline check, not a model result) beside ARK Table 5 (STaRK-PRIME)",
                  columns, body)
    report = Report("distill-budget", "ARK Table 5 / Figure 4: backbone × distillation budget (tiny models)",
                    setting=list(setting), tables=[table],
                    notes=["ARK §5.7: \"using 10% of the trajectories recovers roughly half of the total "
                           "improvement achieved with the full training set\"; the paper's teacher is GPT-4.1 (three "
                           "trajectories per query at temperature 0.7), its students Qwen3-4B/8B with LoRA."])
    if charts and out is not None:
        report.figures.append(_plot(rows, name, out))
    return report


def _plot(rows: Sequence[BackboneRow], name: str, out: Path) -> Figure:
    from .plots import grouped_bars

    path = grouped_bars(out / "distill_budget.png", [r.label for r in rows],
                        {"Hit@1 (ours, tiny)": [100 * r.metrics["hit@1"] for r in rows],
                         "Hit@1 (paper, PRIME)": [ARK_TABLE_5[r.paper_row]["PRIME"][0] for r in rows]},
                        f"ARK Hit@1 per backbone ({name}; tiny models, offline teacher)", "Hit@1")
    return Figure(path, f"Hit@1 per backbone, ours (tiny models on {name}) beside the paper's PRIME. Paper: Figure 4.")
