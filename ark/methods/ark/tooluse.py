"""How ARK's agents used their tools (ARK paper, Sections 5.2 and 5.8, Appendix A.4), from a run's trajectories.

The run analysis of the ``ark`` method: :func:`analyze`, :func:`summary_rows`, :func:`markdown`, :func:`write_charts`
(the interface the evaluation harness calls for any method's trajectories).

Input: ``trajectories.jsonl`` records ``{"id", "trajectories": [Trajectory.to_dict(), ...]}``, read as typed
trajectories (:func:`ark.runtime.trajectory_file.record_trajectories`), and the run's per-query rows (their answers
and wall time). Output: one plain dict of figures, saved as ``tool_use.json``.

A trajectory is *successful* when its own answer list has an answer among its first 5 nodes (Hit@5 of that
trajectory, as the paper's Figure 5 and Tables 9-10 define it); ``query_success`` is Hit@5 of the fused ranking.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np

from ...runtime.trajectory_file import record_trajectories
from .tools import SEARCH_IN_GRAPH as GLOBAL_TOOL
from .tools import SEARCH_IN_NEIGHBORHOOD as NEIGHBORHOOD_TOOL

if TYPE_CHECKING:
    from ...runtime.records import Trajectory


Record = Mapping[str, object]  # a trajectories.jsonl record, or a per-query row, as read


class Stats(TypedDict):
    n: int
    mean: float
    median: float
    p90: float
    max: float


class TrajectoryRow(TypedDict):
    """One trajectory's figures (see :func:`trajectory_rows`)."""

    id: str
    success: bool
    query_success: bool
    steps: int
    global_calls: int
    neighborhood_calls: int
    returns_to_global: bool
    zero_result_calls: int
    repeated_calls: int
    invalid_calls: int
    total_calls: int
    tokens: int
    stop_reason: str
    step_tools: list[list[str]]


class StepShare(TypedDict):
    step: int
    trajectories: int
    with_global: float
    with_neighborhood: float


CallCounts = TypedDict("CallCounts", {"total": int, "global": int, "neighborhood": int, "zero_result": int,
                                      "repeated": int, "invalid": int})


class BySuccess(TypedDict):
    all: Stats
    success: Stats
    failure: Stats


class ToolUse(TypedDict):
    """The figures of :func:`analyze` (only ``n_trajectories``, 0, when there are no trajectories)."""

    n_trajectories: int
    n_queries: NotRequired[int]
    calls: NotRequired[CallCounts]
    share_global: NotRequired[float]
    share_neighborhood: NotRequired[float]
    share_returning_to_global: NotRequired[float]
    trajectory_tool_mix: NotRequired[dict[str, dict[str, float]]]
    share_zero_result_calls: NotRequired[float]
    share_repeated_calls: NotRequired[float]
    neighborhood_calls_per_trajectory: NotRequired[BySuccess]
    steps_per_trajectory: NotRequired[Stats]
    stop_reasons: NotRequired[dict[str, int]]
    tokens_per_query: NotRequired[Stats]
    wall_s_per_query: NotRequired[Stats]
    by_step: NotRequired[list[StepShare]]
    success_definition: NotRequired[str]


def step_tool_names(trajectory: Trajectory) -> list[list[str]]:
    """The names of the tools called at each step of one trajectory."""
    return [[call.name for call in step.tool_calls] for step in trajectory.steps]


def _stats(values: Sequence[float]) -> Stats:
    if not values:
        return {"n": 0, "mean": 0.0, "median": 0.0, "p90": 0.0, "max": 0.0}
    array = np.asarray(values, dtype=np.float64)
    return {"n": len(values), "mean": float(array.mean()), "median": float(np.median(array)),
            "p90": float(np.percentile(array, 90)), "max": float(array.max())}


def _share(part: float, whole: float) -> float:
    return float(part) / whole if whole else 0.0


SUCCESS_AT = 5  # a trajectory succeeds when an answer is among its first SUCCESS_AT nodes (Hit@5)


def _wall(row: Record) -> float | None:
    value = row.get("wall_s")
    return float(value) if isinstance(value, int | float | str) else None


def trajectory_rows(records: Iterable[Record], per_query: Iterable[Record]) -> list[TrajectoryRow]:
    """One flat row per trajectory: query id, success (Hit@5 of the trajectory's own answer list), the fused
    ranking's success, call counts, tokens, steps."""
    rows_by_id = {str(r["id"]): r for r in per_query}
    rows: list[TrajectoryRow] = []
    for record in records:
        qid = str(record["id"])
        query = rows_by_id.get(qid, {})
        answer_ids = query.get("answer_ids")
        gold = set(answer_ids) if isinstance(answer_ids, list | tuple) else set()
        for trajectory in record_trajectories(record):
            names = step_tool_names(trajectory)
            flat = [n for step in names for n in step]
            telemetry = trajectory.telemetry
            answer = list(dict.fromkeys(trajectory.answer_ids))
            rows.append({
                "id": qid,
                "success": any(node in gold for node in answer[:SUCCESS_AT]),
                "query_success": bool(query.get("hit@5")),
                "steps": len(names),
                "global_calls": flat.count(GLOBAL_TOOL),
                "neighborhood_calls": flat.count(NEIGHBORHOOD_TOOL),
                "returns_to_global": any(GLOBAL_TOOL in step for step in names[1:]),
                "zero_result_calls": int(telemetry.get("zero_result_calls", 0)),
                "repeated_calls": int(telemetry.get("repeated_calls", 0)),
                "invalid_calls": int(telemetry.get("invalid_calls", 0)),
                "total_calls": len(flat),
                "tokens": trajectory.usage.total_tokens,
                "stop_reason": trajectory.stop_reason,
                "step_tools": names,
            })
    return rows


def analyze(records: Iterable[Record], per_query: Sequence[Record]) -> ToolUse:
    """Tool-use figures of an agent run (see the module doc); ``{"n_trajectories": 0}`` when there are none."""
    rows = trajectory_rows(records, per_query)
    if not rows:
        return {"n_trajectories": 0}

    n_global, n_neigh = sum(r["global_calls"] for r in rows), sum(r["neighborhood_calls"] for r in rows)
    n_calls = sum(r["total_calls"] for r in rows)
    zero, repeated = sum(r["zero_result_calls"] for r in rows), sum(r["repeated_calls"] for r in rows)
    tokens_per_query: Counter[str] = Counter()
    for r in rows:
        tokens_per_query[r["id"]] += r["tokens"]
    wall = [w for w in map(_wall, per_query) if w is not None]
    max_steps = max(r["steps"] for r in rows)
    by_step: list[StepShare] = []
    for t in range(max_steps):
        active = [r for r in rows if r["steps"] > t]
        by_step.append({
            "step": t + 1,
            "trajectories": len(active),
            "with_global": _share(sum(GLOBAL_TOOL in r["step_tools"][t] for r in active), len(active)),
            "with_neighborhood": _share(sum(NEIGHBORHOOD_TOOL in r["step_tools"][t] for r in active), len(active)),
        })
    return {
        "n_queries": len({r["id"] for r in rows}),
        "n_trajectories": len(rows),
        "calls": {"total": n_calls, "global": n_global, "neighborhood": n_neigh, "zero_result": zero,
                  "repeated": repeated, "invalid": sum(r["invalid_calls"] for r in rows)},
        "share_global": _share(n_global, n_global + n_neigh),
        "share_neighborhood": _share(n_neigh, n_global + n_neigh),
        "share_returning_to_global": _share(sum(r["returns_to_global"] for r in rows), len(rows)),
        "trajectory_tool_mix": {"all": _tool_mix(rows), "success": _tool_mix([r for r in rows if r["success"]])},
        "share_zero_result_calls": _share(zero, n_calls),
        "share_repeated_calls": _share(repeated, n_calls),
        "neighborhood_calls_per_trajectory": {
            "all": _stats([r["neighborhood_calls"] for r in rows]),
            "success": _stats([r["neighborhood_calls"] for r in rows if r["success"]]),
            "failure": _stats([r["neighborhood_calls"] for r in rows if not r["success"]]),
        },
        "steps_per_trajectory": _stats([r["steps"] for r in rows]),
        "stop_reasons": dict(Counter(r["stop_reason"] for r in rows)),
        "tokens_per_query": _stats(list(tokens_per_query.values())),
        "wall_s_per_query": _stats(wall),
        "by_step": by_step,
        "success_definition": f"Hit@{SUCCESS_AT} of the trajectory's own answer list",
    }


def _tool_mix(rows: Sequence[TrajectoryRow]) -> dict[str, float]:
    """Shares of trajectories using only global search, both tools, only neighbourhoods or neither (Table 9), and
    of those calling global search again after their first step (Table 10)."""
    def share(test: Callable[[TrajectoryRow], bool]) -> float:
        return _share(sum(1 for r in rows if test(r)), len(rows))

    return {
        "n": len(rows),
        "only_global": share(lambda r: r["global_calls"] > 0 and r["neighborhood_calls"] == 0),
        "both": share(lambda r: r["global_calls"] > 0 and r["neighborhood_calls"] > 0),
        "only_neighborhood": share(lambda r: r["global_calls"] == 0 and r["neighborhood_calls"] > 0),
        "neither": share(lambda r: r["global_calls"] == 0 and r["neighborhood_calls"] == 0),
        "returns_to_global": share(lambda r: r["returns_to_global"]),
    }


def summary_rows(analysis: ToolUse) -> list[tuple[str, str]]:
    """The headline figures of :func:`analyze` as ``(figure, value)`` rows (none without trajectories)."""
    if not analysis.get("n_trajectories") or "calls" not in analysis:
        return []
    neigh = analysis["neighborhood_calls_per_trajectory"]
    calls = analysis["calls"]
    steps = analysis["steps_per_trajectory"]
    tokens = analysis["tokens_per_query"]
    wall = analysis["wall_s_per_query"]
    return [
        ("trajectories (queries)", f"{analysis['n_trajectories']} ({analysis['n_queries']})"),
        ("global / neighborhood calls", f"{calls['global']} / {calls['neighborhood']}"),
        ("share global / neighborhood",
         f"{100 * analysis['share_global']:.1f}% / {100 * analysis['share_neighborhood']:.1f}%"),
        ("trajectories returning to global search after step 1",
         f"{100 * analysis['share_returning_to_global']:.1f}%"),
        ("neighborhood calls per trajectory: successful / failed trajectories (Hit@5)",
         f"{neigh['success']['mean']:.2f} / {neigh['failure']['mean']:.2f}"),
        ("zero-result calls", f"{calls['zero_result']} ({100 * analysis['share_zero_result_calls']:.1f}%)"),
        ("repeated calls", f"{calls['repeated']} ({100 * analysis['share_repeated_calls']:.1f}%)"),
        ("invalid calls", f"{calls['invalid']}"),
        ("steps per trajectory (mean / max)", f"{steps['mean']:.1f} / {steps['max']:.0f}"),
        ("tokens per query (mean / median)", f"{tokens['mean']:.0f} / {tokens['median']:.0f}"),
        ("wall time per query, s (mean / p90)", f"{wall['mean']:.2f} / {wall['p90']:.2f}"),
    ]


def markdown(analysis: ToolUse) -> str:
    """A short Markdown account of :func:`analyze`'s figures (the rows of :func:`summary_rows`)."""
    rows = summary_rows(analysis)
    if not rows:
        return "No trajectories: no tool-use analysis.\n"
    lines = ["## Tool use", "", "| figure | value |", "|---|---:|"]
    lines += [f"| {figure} | {value} |" for figure, value in rows]
    return "\n".join(lines) + "\n"


def write_charts(analysis: ToolUse, records: Sequence[Record], per_query: Sequence[Record], directory: str | Path,
                 title: str = "") -> list[Path]:
    """The tool-use PNG charts (needs matplotlib: ``pip install 'ark-kg[plots]'``)."""
    from .charts import write_tool_use_charts

    return write_tool_use_charts(analysis, records, per_query, directory, title=title)
