"""GraphScout's behaviour figures from run folders (``ark experiment graphscout-difficulty|graphscout-lengths|
graphscout-tokens GRAPH --queries QUIZ``): every Table 1 row that runs here (:func:`.graphscout_table.run_rows`,
under the paper preset; offline: GraphScout's scripted solver, the prompting baselines need ``--model``), then
per question its difficulty level, answer F1, output tokens, tool calls and tokens in all.

- Figure 4 (``graphscout-difficulty``): answer F1 per difficulty level and method;
- Figure 5 (``graphscout-lengths``): GraphScout's mean output length and tool calls per question, per level;
- Figure 6 (``graphscout-tokens``): mean tokens per question (prompt + completion) per method.

Tokens are the model's reported usage; the scripted solver reports none, so its tokens are estimated from the
text it wrote and read (characters / 4) and labelled "estimated". The paper plots these figures and prints no
numbers: its words are quoted beside ours.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .graphscout_paper import PLOTTED
from .graphscout_table import LEVELS, RowResult, level_of
from .report import Figure, Report, Table

CHARS_PER_TOKEN = 4
PAPER_SAYS = {
    "graphscout-difficulty": "Figure 4 (F1 per level): \"GraphScout-4B consistently achieves strong performance across "
                             "all five domains on easy questions\"; \"The advantage of GraphScout becomes even more "
                             "evident on medium difficulty\"; \"Hard questions are challenging for all methods\".",
    "graphscout-lengths": "Figure 5: \"In most domains, both metrics increase from easy to hard, suggesting deeper "
                          "reasoning and more extensive graph interaction as task complexity rises.\"",
    "graphscout-tokens": "Figure 6: \"GraphScout-4B consistently uses substantially fewer tokens than other active "
                         "traversal-based baselines.\"",
}


@dataclass(frozen=True)
class QuestionStats:
    """One question of one run: its level, answer F1, the model's output tokens, tool calls (failed ones apart)
    and tokens in all; ``estimated`` when the policy reported no usage and the tokens come from characters."""

    level: str | None
    f1: float
    output_tokens: float
    total_tokens: float
    tool_calls: int
    failed_calls: int
    estimated: bool


def _chars(value: Any) -> int:
    return len(value) if isinstance(value, str) else len(str(value)) if value else 0


def trajectory_stats(record: dict[str, Any]) -> tuple[float, float, int, int, bool]:
    """(output tokens, total tokens, tool calls, failed calls, estimated) of one question's trajectory record."""
    usage = record.get("usage") or {}
    agents = record.get("trajectories") or record.get("agents") or []
    calls = [c for a in agents for s in a.get("steps", []) for c in s.get("tool_calls", [])]
    failed = sum(1 for c in calls if not c.get("ok", True) or not c.get("parsed_ok", True)
                 or (isinstance(c.get("result"), dict) and c["result"].get("error")))
    if usage.get("total_tokens"):
        return (float(usage.get("completion_tokens", 0)), float(usage["total_tokens"]), len(calls), failed, False)
    written = read = 0
    for agent in agents:
        seen = 0
        for message in agent.get("messages", []):
            size = _chars(message.get("content")) + sum(_chars(call) for call in message.get("tool_calls") or [])
            if message.get("role") == "assistant":
                read += seen  # the model reads the whole conversation before each turn
                written += size
            seen += size
    return (written / CHARS_PER_TOKEN, (written + read) / CHARS_PER_TOKEN, len(calls), failed, True)


def run_stats(folder: Path) -> list[QuestionStats]:
    """Per question of an ``ark eval`` run folder, joined by id (per_query.jsonl and trajectories.jsonl)."""
    from ..eval.run_folder import RunFolder
    from ..runtime.trajectory_file import read_trajectory_file
    from ..storage.jsonl import read_jsonl

    run = RunFolder(folder)
    records = {str(r.get("id")): r for r in read_trajectory_file(run.trajectories)} if run.trajectories.is_file() \
        else {}
    stats = []
    for row in read_jsonl(run.per_query):
        output, total, calls, failed, estimated = trajectory_stats(records.get(str(row.get("id")), {}))
        f1 = float((row.get("answer_metrics") or {}).get("f1", 0.0))
        stats.append(QuestionStats(level_of(row.get("template")), f1, output, total, calls, failed, estimated))
    return stats


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def by_level(stats: Sequence[QuestionStats]) -> dict[str, list[QuestionStats]]:
    groups: dict[str, list[QuestionStats]] = defaultdict(list)
    for s in stats:
        if s.level is not None:
            groups[s.level].append(s)
    return {level: groups[level] for level in LEVELS if groups.get(level)}


def _run_with(row: RowResult) -> str:
    return "scripted solver (offline, not an LLM)" if row.model == "offline" else (row.model or "—")


def behaviour_report(name: str, rows: Sequence[RowResult], setting: list[str], out: Path,
                     charts: bool) -> Report:
    """The report of experiment ``name`` over the rows run (their run folders read back)."""
    ran = [(row, run_stats(row.folder)) for row in rows if row.folder is not None and row.answers]
    titles = {"graphscout-difficulty": "GraphScout Figure 4: answer F1 per question difficulty level",
              "graphscout-lengths": "GraphScout Figure 5: output length and tool calls per difficulty level",
              "graphscout-tokens": "GraphScout Figure 6: average tokens per question, per method"}
    report = Report(name, titles[name], setting=list(setting), notes=[PAPER_SAYS[name] + " " + PLOTTED])
    waiting = [row.label for row in rows if row.status == "needs --model"]
    if waiting:
        report.notes.append(f"not run offline (they prompt a chat model; rerun with --model): {', '.join(waiting)}")
    if name == "graphscout-difficulty":
        _difficulty(report, ran, out, charts)
    elif name == "graphscout-lengths":
        _lengths(report, [(r, s) for r, s in ran if r.label == "GraphScout"], out, charts)
    else:
        _tokens(report, ran, out, charts)
    report.runs = [{"label": row.label, "folder": str(row.folder)} for row, _ in ran]
    return report


def _difficulty(report: Report, ran: list[tuple[RowResult, list[QuestionStats]]], out: Path, charts: bool) -> None:
    levels = [lv for lv in LEVELS if any(lv in by_level(s) for _, s in ran)]
    table = Table("difficulty", "Answer F1 (token F1) per difficulty level (n questions)",
                  ["Method", "Run with", *levels, "paper"])
    series: dict[str, list[float]] = {}
    for row, stats in ran:
        groups = by_level(stats)
        series[row.label] = [_mean([s.f1 for s in groups.get(lv, [])]) for lv in levels]
        table.rows.append([row.label, _run_with(row), *(f"{_mean([s.f1 for s in groups[lv]]):.3f} "
                                                        f"({len(groups[lv])})" if lv in groups else "—"
                                                        for lv in levels), "plotted, no number"])
    report.tables.append(table)
    if charts and series:
        report.figures.append(_bars(series, levels, "answer F1", "F1 per difficulty level", out / "difficulty.png",
                                    "Answer F1 per difficulty level (ours; paper: Figure 4)", note=_note(ran)))


def _lengths(report: Report, ran: list[tuple[RowResult, list[QuestionStats]]], out: Path, charts: bool) -> None:
    table = Table("lengths", "GraphScout per difficulty level: mean output tokens and tool calls per question",
                  ["Level", "n", "output tokens", "tool calls", "failed calls", "counted", "paper"])
    if not ran:
        report.tables.append(table)
        return
    row, stats = ran[0]
    groups = by_level(stats)
    estimated = any(s.estimated for s in stats)
    for level, group in groups.items():
        table.rows.append([level, str(len(group)), f"{_mean([s.output_tokens for s in group]):.1f}",
                           f"{_mean([s.tool_calls for s in group]):.2f}",
                           f"{_mean([s.failed_calls for s in group]):.2f}",
                           "estimated (chars / 4)" if estimated else "reported", "plotted, no number"])
    table.caption += f" ({_run_with(row)})"
    report.tables.append(table)
    if charts and groups:
        levels = list(groups)
        report.figures.append(_bars(
            {"output tokens": [_mean([s.output_tokens for s in groups[lv]]) for lv in levels]}, levels,
            "tokens" + (" (estimated)" if estimated else ""), "Output length", out / "lengths.png",
            f"Mean output tokens per question by level ({_run_with(row)}; paper: Figure 5)",
            second=("tool calls", [_mean([s.tool_calls for s in groups[lv]]) for lv in levels]), note=_note(ran)))


def _tokens(report: Report, ran: list[tuple[RowResult, list[QuestionStats]]], out: Path, charts: bool) -> None:
    table = Table("tokens", "Mean tokens per question (prompt + completion) per method",
                  ["Method", "Run with", "n", "tokens", "output tokens", "tool calls", "counted", "paper"])
    values = {}
    for row, stats in ran:
        estimated = any(s.estimated for s in stats)
        values[row.label] = [_mean([s.total_tokens for s in stats])]
        table.rows.append([row.label, _run_with(row), str(len(stats)), f"{values[row.label][0]:.0f}",
                           f"{_mean([s.output_tokens for s in stats]):.0f}",
                           f"{_mean([s.tool_calls for s in stats]):.2f}",
                           "estimated (chars / 4)" if estimated else "reported usage", "plotted, no number"])
    report.tables.append(table)
    if charts and values:
        report.figures.append(_bars(values, ["tokens"], "tokens per question", "Token consumption",
                                    out / "tokens.png", "Mean tokens per question per method (ours; paper: Figure 6)",
                                    note=_note(ran)))


def _note(ran: list[tuple[RowResult, list[QuestionStats]]]) -> str:
    """Who ran the plotted rows, as the plot's label."""
    return "; ".join(f"{row.label}: {_run_with(row)}" for row, _ in ran)


def _bars(series: dict[str, list[float]], groups: list[str], ylabel: str, title: str, path: Path, caption: str,
          second: tuple[str, list[float]] | None = None, note: str = "") -> Figure:
    """Grouped bars (one colour per series); with ``second``, a second panel of bars beside the first."""
    from ..plots import pyplot, save_png

    plt = pyplot()
    figure, axes = plt.subplots(1, 2 if second else 1, figsize=(8 if second else 5, 3.2), squeeze=False)
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        axes[0][0].bar([g + i * width for g in range(len(groups))], values, width, label=label)
    axes[0][0].set(xticks=[g + width * (len(series) - 1) / 2 for g in range(len(groups))], ylabel=ylabel, title=title)
    axes[0][0].set_xticklabels(groups)
    if len(series) > 1:
        axes[0][0].legend(fontsize=7)
    if second:
        axes[0][1].bar(range(len(groups)), second[1], color="tab:orange")
        axes[0][1].set(xticks=list(range(len(groups))), ylabel=second[0], title=second[0].capitalize())
        axes[0][1].set_xticklabels(groups)
    if note:
        figure.suptitle(note, fontsize=8)
    save_png(figure, path)
    return Figure(path, caption)
