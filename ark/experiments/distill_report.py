"""ARK distillation's teacher vs student from two scored run folders (paper Table 5 and §5.7): retrieval metrics,
how the tools were used, cost, and how closely the student imitates the teacher.

Figures are computed over the questions both runs answered, so a teacher run over a whole split and a student run
over a subset of it compare fairly. Trajectories are read through :func:`ark.training.datasets.record_trajectories`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..eval.compare import load_run
from ..eval.run_folder import RunFolder, RunFolderError
from ..methods.ark.distill.export import TEACHER_DIR
from ..methods.ark.distill.imitation import (
    reproduction_rate,
    tool_call_mix,
    trajectory_reproduction_rate,
    valid_call_rate,
)
from ..metrics import HEADLINE_METRICS
from ..runtime.trajectory_file import TrajectoryRecords
from ..storage.jsonl import read_jsonl
from ..training.datasets import record_trajectories

METRIC_TITLES = {"hit@1": "Hit@1", "hit@5": "Hit@5", "recall@20": "R@20", "mrr": "MRR"}


@dataclass
class RunFigures:
    """One run's figures over the shared questions."""

    label: str
    folder: str
    model: str | None
    questions: int
    trajectories: int
    metrics: dict[str, float]
    valid_call_rate: float
    calls_per_trajectory: float
    steps_per_trajectory: float
    tool_mix: dict[str, float]
    latency_mean_s: float
    latency_p90_s: float
    prompt_tokens_per_question: float
    completion_tokens_per_question: float
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class DistillReport:
    """Both runs' figures, the imitation figures and the rows of the table."""

    teacher: RunFigures
    student: RunFigures
    trajectory_reproduction: float
    question_reproduction: float
    notes: list[str]

    def rows(self) -> list[tuple[str, str, str, str]]:
        """``(figure, teacher, student, student / teacher)``; the last column is empty where a ratio means nothing."""
        t, s = self.teacher, self.student
        out = [("model", str(t.model), str(s.model), ""), ("questions", str(t.questions), str(s.questions), ""),
               ("trajectories", str(t.trajectories), str(s.trajectories), "")]
        for metric in HEADLINE_METRICS:
            out.append((METRIC_TITLES[metric], f"{100 * t.metrics[metric]:.2f}", f"{100 * s.metrics[metric]:.2f}",
                        _ratio(s.metrics[metric], t.metrics[metric])))
        out.append(("valid tool calls", _percent(t.valid_call_rate), _percent(s.valid_call_rate), ""))
        out.append(("tool calls per trajectory", f"{t.calls_per_trajectory:.1f}", f"{s.calls_per_trajectory:.1f}",
                    _ratio(s.calls_per_trajectory, t.calls_per_trajectory)))
        out.append(("steps per trajectory", f"{t.steps_per_trajectory:.1f}", f"{s.steps_per_trajectory:.1f}",
                    _ratio(s.steps_per_trajectory, t.steps_per_trajectory)))
        for tool in sorted(set(t.tool_mix) | set(s.tool_mix)):
            out.append((f"share of calls: {tool}", _percent(t.tool_mix.get(tool, 0.0)),
                        _percent(s.tool_mix.get(tool, 0.0)), ""))
        out.append(("latency per question, s (mean)", f"{t.latency_mean_s:.2f}", f"{s.latency_mean_s:.2f}",
                    _ratio(s.latency_mean_s, t.latency_mean_s)))
        out.append(("latency per question, s (p90)", f"{t.latency_p90_s:.2f}", f"{s.latency_p90_s:.2f}", ""))
        out.append(("prompt tokens per question", f"{t.prompt_tokens_per_question:,.0f}",
                    f"{s.prompt_tokens_per_question:,.0f}", ""))
        out.append(("completion tokens per question", f"{t.completion_tokens_per_question:,.0f}",
                    f"{s.completion_tokens_per_question:,.0f}", ""))
        out.append(("student trajectories repeating a teacher trajectory", "", _percent(self.trajectory_reproduction),
                    ""))
        out.append(("questions reproduced agent by agent", "", _percent(self.question_reproduction), ""))
        return out

    def markdown(self, title: str = "Teacher vs student") -> str:
        lines = [f"# {title}", "", f"Teacher: `{self.teacher.folder}`  ", f"Student: `{self.student.folder}`", "",
                 f"| figure | {self.teacher.label} | {self.student.label} | {self.student.label} / "
                 f"{self.teacher.label} |", "|---|---:|---:|---:|"]
        lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in self.rows()]
        lines += ["", "Metrics ×100 over the questions both runs answered. A trajectory repeats the teacher when its "
                  "sequence of (tool, JSON arguments) equals one of the teacher's trajectories on that question."]
        lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {"teacher": asdict(self.teacher), "student": asdict(self.student),
                "trajectory_reproduction": self.trajectory_reproduction,
                "question_reproduction": self.question_reproduction, "notes": self.notes,
                "rows": [list(row) for row in self.rows()]}


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def _ratio(a: float, b: float) -> str:
    return f"{100 * a / b:.1f}%" if b else ""


def run_folder(path: str | Path) -> RunFolder:
    """The run folder at ``path``, or the teacher run inside an export folder."""
    path = Path(path)
    if not (path / "config.json").is_file() and (path / TEACHER_DIR / "config.json").is_file():
        path = path / TEACHER_DIR
    if not path.is_dir():
        raise RunFolderError(f"no such run folder: {path}")
    return RunFolder(path)


def _records(folder: RunFolder, ids: set[str]) -> list[dict[str, Any]]:
    if not folder.trajectories.is_file():
        raise RunFolderError(f"{folder.path} has no trajectories.jsonl: the report compares agent runs (method ark)")
    return [r for r in TrajectoryRecords(folder.trajectories, repair=True) if str(r.get("id")) in ids]


def _figures(label: str, folder: RunFolder, rows: dict[str, dict], ids: list[str],
             records: list[dict[str, Any]]) -> RunFigures:
    config = folder.read_config()
    trajectories = [t for record in records for t in record_trajectories(record)]
    n_traj = max(1, len(trajectories))
    mix = tool_call_mix(records)
    calls = sum(mix.values())
    wall = {str(r["id"]): float(r.get("wall_s", 0.0)) for r in read_jsonl(folder.results, repair=True)}
    latencies = np.array([wall.get(qid, 0.0) for qid in ids]) if ids else np.zeros(1)
    prompt = sum(t.usage.prompt_tokens for t in trajectories)
    completion = sum(t.usage.completion_tokens for t in trajectories)
    return RunFigures(
        label=label, folder=str(folder.path), model=config.get("llm"), questions=len(ids),
        trajectories=len(trajectories),
        metrics={m: float(np.mean([float(rows[qid].get(m, 0.0)) for qid in ids])) for m in HEADLINE_METRICS},
        valid_call_rate=valid_call_rate(records), calls_per_trajectory=calls / n_traj,
        steps_per_trajectory=sum(len(t.steps) for t in trajectories) / n_traj,
        tool_mix={name: count / calls for name, count in mix.items()} if calls else {},
        latency_mean_s=float(latencies.mean()), latency_p90_s=float(np.percentile(latencies, 90)),
        prompt_tokens_per_question=prompt / max(1, len(ids)),
        completion_tokens_per_question=completion / max(1, len(ids)),
        options=config.get("method_options") or {},
    )


def distill_report(teacher: str | Path, student: str | Path, labels: Sequence[str] = ("teacher", "student")
                   ) -> DistillReport:
    """Compare two scored agent run folders (or an export folder's teacher run) over their shared questions."""
    folders = [run_folder(teacher), run_folder(student)]
    loaded = [load_run(folder.path) for folder in folders]
    shared = [qid for qid in loaded[0].per_query if qid in loaded[1].per_query]
    if not shared:
        raise RunFolderError(f"{folders[0].path} and {folders[1].path} share no question id: run the student on "
                             f"(some of) the teacher's questions")
    ids = set(shared)
    records = [_records(folder, ids) for folder in folders]
    figures = [_figures(label, folder, run.per_query, shared, recs)
               for label, folder, run, recs in zip(labels, folders, loaded, records, strict=True)]
    notes = []
    options = [f.options for f in figures]
    differing = sorted(key for key in set(options[0]) | set(options[1]) if options[0].get(key) != options[1].get(key))
    if differing:
        notes.append(f"the runs' method options differ in: {', '.join(differing)}")
    for run in loaded:
        if len(run.per_query) != len(shared):
            notes.append(f"{run.folder.path} answered {len(run.per_query)} questions; {len(shared)} are shared")
    share, _ = trajectory_reproduction_rate(records[0], records[1])
    return DistillReport(figures[0], figures[1], share, reproduction_rate(records[0], records[1]), notes)
