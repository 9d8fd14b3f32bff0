"""The experiments' PNG plots (matplotlib through :mod:`ark.plots`): grouped bars, budget heatmaps, tool-use shares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..plots import pyplot, save_png

COLORS = ("#264653", "#2a9d8f", "#e9c46a", "#f4a261", "#e76f51", "#8d99ae")


def grouped_bars(path: Path, labels: Sequence[str], series: Mapping[str, Sequence[float]], title: str,
                 ylabel: str = "metric ×100") -> Path:
    """One group of bars per row label, one bar per series (e.g. Hit@1 and R@20), values printed on the bars."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(labels) + 2), 4.2))
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(labels))
    for n, (name, values) in enumerate(series.items()):
        bars = ax.bar(x + (n - (len(series) - 1) / 2) * width, values, width=width, label=name,
                      color=COLORS[n % len(COLORS)])
        ax.bar_label(bars, fmt="%.1f", fontsize=8, padding=2)
    ax.set_xticks(x, labels, rotation=0 if max(map(len, labels), default=0) < 16 else 15)
    ax.set_ylabel(ylabel)
    top = max([v for values in series.values() for v in values] or [1.0])
    ax.set_ylim(0, max(top * 1.2, 1.0))
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    ax.set_title(title)
    return save_png(fig, path)


def heatmaps(path: Path, rows: Sequence[int], columns: Sequence[int], panels: Sequence[tuple[str, np.ndarray, str]],
             title: str, row_label: str = "parallel agents n", column_label: str = "T_max (steps per agent)") -> Path:
    """Side-by-side heatmaps over a grid (rows × columns), one per ``(panel title, values, cell format)``; each panel
    has its own colour scale, as in the paper's Figure 2."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 0.6 * len(rows) + 2.6), squeeze=False)
    for ax, (name, values, fmt) in zip(axes[0], panels, strict=True):
        image = ax.imshow(values, cmap="viridis" if "latency" not in name.lower() else "magma_r", aspect="auto",
                          origin="lower")
        ax.set_xticks(range(len(columns)), [str(c) for c in columns])
        ax.set_yticks(range(len(rows)), [str(r) for r in rows])
        ax.set_xlabel(column_label)
        ax.set_ylabel(row_label)
        ax.set_title(name)
        span = float(np.nanmax(values) - np.nanmin(values)) if values.size else 0.0
        middle = float(np.nanmin(values)) + span / 2 if values.size else 0.0
        for (i, j), value in np.ndenumerate(values):
            dark = value < middle if "latency" not in name.lower() else value > middle
            ax.text(j, i, format(value, fmt), ha="center", va="center", color="white" if dark else "black",
                    fontsize=9)
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.suptitle(title)
    return save_png(fig, path)


def tool_use_bars(path: Path, call_shares: Mapping[str, float], trajectory_mix: Mapping[str, Mapping[str, float]],
                  title: str) -> Path:
    """Figure 3 and Table 9 as bars: the share of tool calls by tool, and of trajectories by the tools they used
    (all and successful trajectories)."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8), width_ratios=[1, 1.4])
    names = list(call_shares)
    left.barh([0], [100 * call_shares[names[0]]], color=COLORS[0], label=names[0], height=0.5)
    left.barh([0], [100 * call_shares[names[1]]], left=[100 * call_shares[names[0]]], color=COLORS[2],
              label=names[1], height=0.5)
    left.text(50 * call_shares[names[0]], 0, f"{100 * call_shares[names[0]]:.1f}%", ha="center", va="center",
              color="white")
    left.text(100 * call_shares[names[0]] + 50 * call_shares[names[1]], 0, f"{100 * call_shares[names[1]]:.1f}%",
              ha="center", va="center")
    left.set_xlim(0, 100)
    left.set_yticks([])
    left.set_xlabel("% of tool calls")
    left.set_title("Tool calls by tool")
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2, fontsize=8)
    categories = [("only_global", "only global search"), ("both", "both tools"),
                  ("only_neighborhood", "only neighbourhood"), ("neither", "neither")]
    shown = [(key, label) for key, label in categories if any(m.get(key, 0) for m in trajectory_mix.values())]
    groups = list(trajectory_mix)
    starts = np.zeros(len(groups))
    for n, (key, label) in enumerate(shown):
        values = np.asarray([100 * trajectory_mix[g].get(key, 0.0) for g in groups])
        right.barh(range(len(groups)), values, left=starts, color=COLORS[(2 * n) % len(COLORS)], label=label,
                   height=0.5)
        for y, (start, value) in enumerate(zip(starts, values, strict=True)):
            if value >= 6:
                right.text(start + value / 2, y, f"{value:.1f}%", ha="center", va="center", fontsize=8)
        starts += values
    right.set_yticks(range(len(groups)), groups)
    right.set_xlim(0, 100)
    right.set_xlabel("% of trajectories")
    right.set_title("Trajectories by the tools they used")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=max(len(shown), 1), fontsize=8)
    fig.suptitle(title)
    return save_png(fig, path)
