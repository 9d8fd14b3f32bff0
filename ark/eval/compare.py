"""Comparing run folders: metrics side by side (overall and per template) and the queries they disagree on."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..metrics import HEADLINE_METRICS
from ..storage.jsonl import read_jsonl
from ..text import clean_inline
from .run_folder import RunFolder, RunFolderError
from .scoring import METRIC_LABELS, percent, summary_rows


@dataclass
class LoadedRun:
    """A scored run folder: its label, summary and per-query rows keyed by query id."""

    label: str
    folder: RunFolder
    summary: dict[str, Any]
    per_query: dict[str, dict[str, Any]]


def load_run(path: str | Path, label: str | None = None) -> LoadedRun:
    """Open a scored run folder (one that ``ark eval`` finished scoring)."""
    folder = RunFolder(Path(path))
    if not folder.summary_json.is_file() or not folder.per_query.is_file():
        raise RunFolderError(f"{folder.path} is not a scored run folder (no summary.json / per_query.jsonl); "
                             "run `ark eval` there first")
    summary = json.loads(folder.summary_json.read_text(encoding="utf-8"))
    rows = {str(r["id"]): r for r in read_jsonl(folder.per_query, repair=False)}
    return LoadedRun(label or folder.path.name, folder, summary, rows)


def comparison_rows(runs: Sequence[LoadedRun], metrics: Sequence[str] = HEADLINE_METRICS) -> list[list[str]]:
    """Table rows ``[scope, run, n, metric...]``: overall first, then each template, one row per run."""
    scopes: list[str] = []
    for run in runs:
        for scope, _ in summary_rows(run.summary):
            if scope not in scopes:
                scopes.append(scope)
    table = []
    for scope in scopes:
        for run in runs:
            values = dict(summary_rows(run.summary)).get(scope)
            if values is None:
                table.append([scope, run.label, "-", *("-" for _ in metrics)])
            else:
                table.append([scope, run.label, str(values["n"]), *(percent(values[m]) for m in metrics)])
    return table


def disagreements(a: LoadedRun, b: LoadedRun, metric: str = "hit@1") -> tuple[list[dict], list[dict]]:
    """Per-query rows ``a`` gets right and ``b`` wrong on ``metric`` (value 1 vs 0), and the other way round.

    Only queries present in both runs are compared.
    """
    shared = [qid for qid in a.per_query if qid in b.per_query]
    a_only = [a.per_query[q] for q in shared if a.per_query[q][metric] > 0 and b.per_query[q][metric] == 0]
    b_only = [b.per_query[q] for q in shared if b.per_query[q][metric] > 0 and a.per_query[q][metric] == 0]
    return a_only, b_only


def comparison_markdown(runs: Sequence[LoadedRun], metric: str = "hit@1", examples: int = 10) -> str:
    """The comparison as Markdown: the side-by-side table, then the disagreements of the first run with each other."""
    head = ["scope", "run", "n", *(METRIC_LABELS[m] for m in HEADLINE_METRICS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---", "---"] + ["---:"] * (len(head) - 2)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in comparison_rows(runs)]
    base = runs[0]
    for other in runs[1:]:
        a_only, b_only = disagreements(base, other, metric)
        for winner, loser, rows in ((base, other, a_only), (other, base, b_only)):
            lines += ["", f"**{len(rows)} queries {winner.label} gets right and {loser.label} wrong "
                      f"({METRIC_LABELS[metric]})**", ""]
            lines += [f"- `{r['id']}`: {clean_inline(r.get('query', ''), 80)}" for r in rows[:examples]]
            if len(rows) > examples:
                lines.append(f"- … and {len(rows) - examples} more")
    return "\n".join(lines) + "\n"
