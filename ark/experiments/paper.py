"""The ARK paper's experiments (Polonuer et al.): which configurations each runs, and its tables and plots.

| name | paper | configurations |
|---|---|---|
| ``ablations`` | Table 2 | full toolset, w/o Neighbors, Neighbors w/o q, Neighbors w/o F (random 10% of queries) |
| ``fusion`` | Table 3 | voting, ordering, random fusion of the three agents' lists |
| ``relevance`` | Table 4 | rel = BM25 (field-aware, our default), BM25 (plain, the paper's), dense embeddings |
| ``budget`` | Figure 2 | agents n × T_max grid: Hit@1, R@20 and end-to-end latency heatmaps |
| ``agents-vs-steps`` | Table 8 | one agent with T_max = 3T against three agents with T_max = T |
| ``tool-use`` | Figure 3, Tables 9-10 | tool-call shares; trajectories by tools used; returns to global search |
| ``neighborhood`` | Figure 5 | neighbourhood calls per trajectory, successful vs failed trajectories |

Every table row names the model or policy that produced it and the ranking truncation it was scored with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..methods.ark.options import ABLATION_SWITCHES, FUSIONS
from .plots import grouped_bars, heatmaps, tool_use_bars
from .report import Figure, Report, Table, metric_columns, pct, truncation_label
from .runs import Variant, VariantRun

if TYPE_CHECKING:
    from ..methods.ark.tooluse import TrajectoryRow

METRICS = ("hit@1", "hit@5", "recall@20", "mrr")
ABLATION_LABELS = {"full": "Full", "no_neighbors": "w/o Neighbors", "neighbors_no_query": "Neighbors w/o q",
                   "neighbors_no_filters": "Neighbors w/o F"}
FUSION_LABELS = {"votes": "Voting", "ordering": "Ordering", "random": "Random"}


@dataclass(frozen=True)
class Settings:
    """The knobs of the experiments that have them (each documented on its command-line flag)."""

    agents: tuple[int, ...] = (1, 2, 3)
    steps: tuple[int, ...] = (5, 10, 20)
    t: int = 10


@dataclass(frozen=True)
class Experiment:
    """One of the paper's experiments: its configurations and how its report is drawn from their runs."""

    name: str
    title: str
    paper: str
    variants: Callable[[Settings], list[Variant]]
    report: Callable[[Report, list[VariantRun], Settings, Path], None]
    default_fraction: float = 1.0


def metrics_table(name: str, caption: str, label: str, runs: Sequence[VariantRun], latency: bool = False) -> Table:
    """One row per run: its label, model or policy, truncation, number of queries and the headline metrics."""
    columns = [label, "Model / policy", "Truncation", "Queries", *metric_columns(METRICS)]
    if latency:
        columns += ["Latency s (mean)", "Latency s (p90)"]
    table = Table(name, caption, columns)
    for run in runs:
        row = [run.variant.label, run.model, truncation_label(run.truncate), str(run.overall["n"]),
               *(pct(run.overall[m]) for m in METRICS)]
        if latency:
            wall = run.latency()
            row += [f"{wall['mean']:.2f}", f"{wall['p90']:.2f}"]
        table.rows.append(row)
    return table


def _bars(report: Report, runs: Sequence[VariantRun], directory: Path, file: str, title: str) -> None:
    labels = [run.variant.label for run in runs]
    series = {"Hit@1": [100 * r.overall["hit@1"] for r in runs], "R@20": [100 * r.overall["recall@20"] for r in runs]}
    path = grouped_bars(directory / file, labels, series, f"{title} · {runs[0].model}")
    report.figures.append(Figure(path, f"{title}: Hit@1 and R@20 per configuration ({runs[0].model}, truncation "
                                       f"{truncation_label(runs[0].truncate)})."))


# ------------------------------------------------------------------------------------------------ Table 2
def _ablation_variants(settings: Settings) -> list[Variant]:
    return [Variant(name, ABLATION_LABELS[name], {"tools": switches}) for name, switches in ABLATION_SWITCHES.items()]


def _ablation_report(report: Report, runs: list[VariantRun], settings: Settings, directory: Path) -> None:
    report.tables.append(metrics_table("table2", "Table 2: impact of the toolset design", "Setup", runs))
    _bars(report, runs, directory, "ablations.png", "Tool ablations (Table 2)")
    report.notes.append("w/o Neighbors removes the neighbourhood tool; Neighbors w/o q removes its ranking query "
                        "(neighbours in stored order); Neighbors w/o F removes its node and edge type filters.")


# ------------------------------------------------------------------------------------------------ Table 3
def _fusion_variants(settings: Settings) -> list[Variant]:
    return [Variant(name, FUSION_LABELS[name], {"fusion": name}) for name in FUSIONS]


def _fusion_report(report: Report, runs: list[VariantRun], settings: Settings, directory: Path) -> None:
    report.tables.append(metrics_table("table3", "Table 3: aggregating the parallel agents' lists", "Fusion", runs))
    _bars(report, runs, directory, "fusion.png", "Fusion strategies (Table 3)")
    report.notes.append("Voting ranks nodes by how many agents chose them, ties by earliest position; Ordering "
                        "concatenates the lists keeping first appearances; Random shuffles their union (seeded). "
                        "With a model, the on-disk reply cache lets all three read the same agent replies.")


# ------------------------------------------------------------------------------------------------ Table 4
def _relevance_variants(settings: Settings) -> list[Variant]:
    return [
        Variant("bm25", "BM25 (field-aware)", {"relevance": "bm25", "scoring": "fielded"}),
        Variant("bm25-plain", "BM25 (plain)", {"relevance": "bm25", "scoring": "plain"}),
        Variant("dense", "Dense (MiniLM)", {"relevance": "dense"}),
    ]


def _relevance_report(report: Report, runs: list[VariantRun], settings: Settings, directory: Path) -> None:
    report.tables.append(metrics_table("table4", "Table 4: the relevance function inside ARK", "Relevance", runs))
    _bars(report, runs, directory, "relevance.png", "Relevance function (Table 4)")
    report.notes.append("rel(q, d) ranks both global search and neighbourhoods. BM25 (field-aware) is ARK's default "
                        "(names weighted above text, exact names first); BM25 (plain) is the paper's; Dense uses "
                        "all-MiniLM-L6-v2 embeddings of the node text (the paper used text-embedding-3-large).")


# ------------------------------------------------------------------------------------------------ Figure 2
def _budget_variants(settings: Settings) -> list[Variant]:
    return [Variant(f"agents{a}-steps{t}", f"n = {a}, T_max = {t}", {"n_agents": a, "max_steps": t},
                    {"agents": a, "steps": t}) for a in settings.agents for t in settings.steps]


def _budget_report(report: Report, runs: list[VariantRun], settings: Settings, directory: Path) -> None:
    report.tables.append(metrics_table("figure2", "Figure 2: retrieval quality and latency by inference budget",
                                       "Configuration", runs, latency=True))
    by = {(r.variant.params["agents"], r.variant.params["steps"]): r for r in runs}
    agents, steps = list(settings.agents), list(settings.steps)

    def grid(value) -> np.ndarray:
        return np.asarray([[value(by[(a, t)]) for t in steps] for a in agents], dtype=float)

    panels = [("Hit@1", grid(lambda r: 100 * r.overall["hit@1"]), ".1f"),
              ("R@20", grid(lambda r: 100 * r.overall["recall@20"]), ".1f"),
              ("latency, s per query (mean)", grid(lambda r: r.latency()["mean"]), ".2f")]
    path = heatmaps(directory / "budget.png", agents, steps, panels, f"Budget (Figure 2) · {runs[0].model}")
    report.figures.append(Figure(path, f"Hit@1, R@20 and mean end-to-end latency per query over parallel agents × "
                                       f"T_max ({runs[0].model}, truncation {truncation_label(runs[0].truncate)}); "
                                       "each panel has its own colour scale."))
    report.notes.append("Latency is the wall time per query measured by the runner, with queries run concurrently "
                        "(--concurrency); agents of one query run in parallel, so latency follows the slowest agent.")


# ------------------------------------------------------------------------------------------------ Table 8
def _agents_vs_steps_variants(settings: Settings) -> list[Variant]:
    t = settings.t
    return [Variant(f"1agent-steps{3 * t}", f"1 agent, T_max = {3 * t}", {"n_agents": 1, "max_steps": 3 * t}),
            Variant(f"3agents-steps{t}", f"3 agents, T_max = {t}", {"n_agents": 3, "max_steps": t})]


def _agents_vs_steps_report(report: Report, runs: list[VariantRun], settings: Settings, directory: Path) -> None:
    report.tables.append(metrics_table("table8", f"Table 8: one longer trajectory against three shorter ones (same "
                                                 f"total budget, {3 * settings.t} steps)", "Setup", runs,
                                       latency=True))
    _bars(report, runs, directory, "agents_vs_steps.png", "1 agent × 3T vs 3 agents × T (Table 8)")


# ------------------------------------------------------------------------------------------------ Figure 3, Tables 9-10
def _default_variant(settings: Settings) -> list[Variant]:
    return [Variant("default", "ARK", {})]


def _trajectory_rows(run: VariantRun) -> list[TrajectoryRow]:
    from ..methods.ark.tooluse import trajectory_rows

    return trajectory_rows(run.trajectories(), run.per_query())


def _tool_use_report(report: Report, runs: list[VariantRun], settings: Settings, directory: Path) -> None:
    from ..methods.ark.tooluse import analyze

    [run] = runs
    analysis = analyze(run.trajectories(), run.per_query())
    model, cut = run.model, truncation_label(run.truncate)
    report.tables.append(metrics_table("retrieval", "Retrieval quality of the analysed run", "Setup", runs))
    calls = analysis.get("calls", {"global": 0, "neighborhood": 0})
    figure3 = Table("figure3", "Figure 3: share of tool calls by tool", [
        "Model / policy", "Truncation", "Trajectories", "Global search calls", "Neighbourhood calls",
        "Global search %", "Neighbourhood %"])
    figure3.rows.append([model, cut, str(analysis.get("n_trajectories", 0)), str(calls["global"]),
                         str(calls["neighborhood"]), pct(analysis.get("share_global", 0.0)),
                         pct(analysis.get("share_neighborhood", 0.0))])
    mix = analysis.get("trajectory_tool_mix") or {"all": {}, "success": {}}
    splits = (("All traj.", mix["all"]), ("Successful traj.", mix["success"]))
    table9 = Table("table9", "Table 9: trajectories by the tools they used (successful = Hit@5 of the trajectory)",
                   ["Split", "Model / policy", "Truncation", "Trajectories", "Only global search %", "Both tools %",
                    "Only neighbourhood %", "Neither %"])
    table10 = Table("table10", "Table 10: trajectories that call global search again after step 1",
                    ["Split", "Model / policy", "Truncation", "Trajectories", "Global search after step 1 %"])
    for split, values in splits:
        n = str(values.get("n", 0))
        table9.rows.append([split, model, cut, n, *(pct(values.get(k, 0.0)) for k in
                                                    ("only_global", "both", "only_neighborhood", "neither"))])
        table10.rows.append([split, model, cut, n, pct(values.get("returns_to_global", 0.0))])
    report.tables += [figure3, table9, table10]
    path = tool_use_bars(directory / "tool_use.png",
                         {"global search": analysis.get("share_global", 0.0),
                          "neighbourhood exploration": analysis.get("share_neighborhood", 0.0)},
                         {"all trajectories": mix["all"], "successful": mix["success"]},
                         f"Tool use (Figure 3, Table 9) · {model}")
    report.figures.append(Figure(path, "Left: share of all tool calls that are global search vs neighbourhood "
                                       "exploration (Figure 3). Right: trajectories that used only global search, "
                                       f"or both tools, all and successful ones (Table 9) ({model})."))


# ------------------------------------------------------------------------------------------------ Figure 5
def _neighborhood_report(report: Report, runs: list[VariantRun], settings: Settings, directory: Path) -> None:
    from ..methods.ark.charts import neighborhood_by_success

    [run] = runs
    rows = _trajectory_rows(run)
    report.tables.append(metrics_table("retrieval", "Retrieval quality of the analysed run", "Setup", runs))
    table = Table("figure5", "Figure 5: neighbourhood calls per trajectory, by the trajectory's success (Hit@5)",
                  ["Trajectories", "Model / policy", "Truncation", "Count", "Mean calls", "Median calls",
                   "No calls %", "More than 10 calls %", "Max calls"])
    for label, selected in (("Successful", [r for r in rows if r["success"]]),
                            ("Failed", [r for r in rows if not r["success"]])):
        calls = np.asarray([r["neighborhood_calls"] for r in selected], dtype=float)
        if len(calls):
            stats = [f"{calls.mean():.2f}", f"{np.median(calls):.1f}", pct(float((calls == 0).mean())),
                     pct(float((calls > 10).mean())), f"{calls.max():.0f}"]
        else:
            stats = ["0.00", "0.0", "0.00", "0.00", "0"]
        table.rows.append([label, run.model, truncation_label(run.truncate), str(len(selected)), *stats])
    report.tables.append(table)
    path = neighborhood_by_success(rows, directory / "neighborhood_calls.png",
                                   f"Neighbourhood calls by success (Figure 5) · {run.model}")
    report.figures.append(Figure(path, "Distribution of neighbourhood calls per trajectory for successful (Hit@5 of "
                                       f"the trajectory's own answer) and failed trajectories ({run.model})."))


EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (
    Experiment("ablations", "Tool ablations", "Table 2", _ablation_variants, _ablation_report, default_fraction=0.1),
    Experiment("fusion", "Fusion strategies", "Table 3", _fusion_variants, _fusion_report),
    Experiment("relevance", "BM25 vs dense relevance inside ARK", "Table 4", _relevance_variants, _relevance_report),
    Experiment("budget", "Agents × T_max budget", "Figure 2", _budget_variants, _budget_report),
    Experiment("agents-vs-steps", "One agent with 3T vs three agents with T", "Table 8", _agents_vs_steps_variants,
               _agents_vs_steps_report),
    Experiment("tool-use", "Tool-use shares per trajectory", "Figure 3, Tables 9-10", _default_variant,
               _tool_use_report),
    Experiment("neighborhood", "Neighbourhood calls by per-trajectory success", "Figure 5", _default_variant,
               _neighborhood_report),
)}
