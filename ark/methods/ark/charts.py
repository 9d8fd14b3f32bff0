"""PNG charts of a run's tool use (needs matplotlib: ``pip install 'ark-kg[plots]'``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...plots import pyplot, save_png
from .tooluse import GLOBAL_TOOL, Record, ToolUse, TrajectoryRow, _wall, trajectory_rows

SUCCESS_COLOR = "#2a9d8f"
FAILURE_COLOR = "#e76f51"
GLOBAL_COLOR = "#264653"
NEIGHBORHOOD_COLOR = "#e9c46a"


def write_tool_use_charts(
    analysis: ToolUse,
    records: Sequence[Record],
    per_query: Sequence[Record],
    directory: str | Path,
    title: str = "",
) -> list[Path]:
    """Write the tool-use PNGs into ``directory`` and return their paths (none without trajectories)."""
    if not analysis.get("n_trajectories") or "calls" not in analysis:
        return []
    plt = pyplot()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rows = trajectory_rows(records, per_query)
    paths = [
        _by_step(plt, analysis, directory / "tool_use_by_step.png", title),
        neighborhood_by_success(rows, directory / "neighborhood_calls_by_success.png", title),
        _cost(plt, analysis, rows, per_query, directory / "cost_per_query.png", title),
    ]
    return paths


def _save(plt, fig, path: Path) -> Path:
    return save_png(fig, path)


def _by_step(plt, analysis: ToolUse, path: Path, title: str) -> Path:
    steps = analysis.get("by_step", [])
    x = [s["step"] for s in steps]
    fig, (ax, ax_n) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True, height_ratios=[3, 1])
    ax.plot(x, [100 * s["with_global"] for s in steps], marker="o", color=GLOBAL_COLOR,
            label=f"global search ({GLOBAL_TOOL})")
    ax.plot(x, [100 * s["with_neighborhood"] for s in steps], marker="s", color=NEIGHBORHOOD_COLOR,
            label="neighborhood search")
    ax.set_ylabel("% of trajectories at this step")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    share = analysis.get("share_returning_to_global", 0.0)
    ax.set_title(f"{title}\nTool choice by step ({100 * share:.0f}% of trajectories return to global search)".strip())
    ax_n.bar(x, [s["trajectories"] for s in steps], color="#8d99ae")
    ax_n.set_ylabel("trajectories\nstill running")
    ax_n.set_xlabel("step")
    return _save(plt, fig, path)


def neighborhood_by_success(rows: Sequence[TrajectoryRow], path: Path, title: str = "") -> Path:
    """Figure 5: the distribution of neighbourhood calls per trajectory, successful (Hit@5) vs failed trajectories
    (``rows``: :func:`~ark.methods.ark.tooluse.trajectory_rows`)."""
    plt = pyplot()
    success = [r["neighborhood_calls"] for r in rows if r["success"]]
    failure = [r["neighborhood_calls"] for r in rows if not r["success"]]
    top = max([0, *success, *failure])
    bins = list(range(top + 2))
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.4
    for values, offset, color, label in ((success, -width / 2, SUCCESS_COLOR, "successful trajectory (Hit@5)"),
                                         (failure, width / 2, FAILURE_COLOR, "failed trajectory")):
        counts = [sum(1 for v in values if v == b) for b in bins[:-1]]
        shares = [100 * c / len(values) if values else 0 for c in counts]
        mean = sum(values) / len(values) if values else 0.0
        ax.bar([b + offset for b in bins[:-1]], shares, width=width, color=color,
               label=f"{label}: {len(values)} trajectories, mean {mean:.2f}")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # headroom so the legend does not cover the bars
    ax.set_xlabel("neighborhood calls in the trajectory")
    ax.set_ylabel("% of trajectories")
    if top <= 20:
        ax.set_xticks(bins[:-1])
    else:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    ax.set_title(f"{title}\nNeighborhood calls per trajectory, by success".strip())
    return _save(plt, fig, path)


def _cost(plt, analysis: ToolUse, rows: Sequence[TrajectoryRow], per_query: Sequence[Record], path: Path,
          title: str) -> Path:
    tokens: dict[str, int] = {}
    for r in rows:
        tokens[r["id"]] = tokens.get(r["id"], 0) + r["tokens"]
    wall = [w for w in map(_wall, per_query) if w is not None]
    calls = analysis["calls"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    names = ["global", "neighborhood", "zero-result", "repeated", "invalid"]
    values = [calls["global"], calls["neighborhood"], calls["zero_result"], calls["repeated"], calls["invalid"]]
    colors = [GLOBAL_COLOR, NEIGHBORHOOD_COLOR, FAILURE_COLOR, "#f4a261", "#9d0208"]
    axes[0].barh(names[::-1], values[::-1], color=colors[::-1])
    for y, v in enumerate(values[::-1]):
        axes[0].text(v, y, f" {v}", va="center")
    axes[0].set_title("tool calls (all trajectories)")
    axes[0].set_xlim(0, max([1, *values]) * 1.25)
    if any(tokens.values()):
        axes[1].hist(list(tokens.values()), bins=30, color=GLOBAL_COLOR)
        axes[1].set_xlabel("total tokens")
        axes[1].set_ylabel("queries")
    else:
        axes[1].text(0.5, 0.5, "no token usage recorded\n(offline policy or cached replies)", ha="center",
                     va="center", transform=axes[1].transAxes, color="#555555")
        axes[1].set_xticks([])
        axes[1].set_yticks([])
    axes[1].set_title(f"tokens per query (mean {analysis['tokens_per_query']['mean']:.0f})")
    axes[2].hist(wall, bins=30, color="#8d99ae")
    axes[2].set_ylabel("queries")
    axes[2].set_title(f"wall time per query (mean {analysis['wall_s_per_query']['mean']:.2f} s)")
    axes[2].set_xlabel("seconds")
    if title:
        fig.suptitle(title)
    return _save(plt, fig, path)
