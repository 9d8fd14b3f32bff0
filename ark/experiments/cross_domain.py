"""GraphScout's cross-domain grid (Figure 3) with tiny models: ``ark experiment cross-domain GRAPH --queries QUIZ
--set domains=OTHER[,OTHER...]``.

Each domain is a graph with a GraphScout quiz (GRAPH's is ``--queries``; every other domain's is written by the
deterministic quizzer, seeded, into the runs folder). A tiny model is trained on each domain as in
:mod:`.graphscout_tiny` (warm start on the scripted solver's trajectories, then GRPO) and scored (answer F1) on every
domain's test questions: the grid of training × test domains. Beside it, as the paper's baselines: the scripted
solver (no training; the paper: Qwen-Max GraphCoT) and each domain's model before GRPO (the paper: the base
Qwen3-4B) on their own domain. Every number is a tiny-model pipeline check. The paper plots the grid and prints no
numbers for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .graphscout_paper import PLOTTED
from .graphscout_tiny import TinyLab
from .report import Figure, Report, Table

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

PAPER_SAYS = ("Figure 3 (F1 of GraphScout-4B trained on one GRBench domain, tested on all five): \"models trained on "
              "one domain consistently achieve solid performance on unseen domains, with only mild performance "
              "degradation under domain shifts.\"")


def domain_quiz(graph: KnowledgeGraph, folder: Path, settings: dict[str, Any], seed: int) -> Path:
    """A GraphScout quiz of ``graph`` (the deterministic quizzer) in ``folder``, written once. On a graph so small
    that the leakage guard leaves no training question, the quiz is made without the guard (its name says so)."""
    from ..methods.graphscout.quiz import GraphScoutQuizConfig, generate_graphscout_quiz
    from ..storage.jsonl import write_jsonl_atomic

    n = max(12, 4 * (settings["questions"] + settings["eval_questions"]))
    for guard in (True, False):
        path = folder / f"quiz-{graph.info.name or 'graph'}-seed{seed}{'' if guard else '-unguarded'}.jsonl"
        if not path.is_file():
            config = GraphScoutQuizConfig(n=n, seed=seed, guard=guard)
            write_jsonl_atomic(path, generate_graphscout_quiz(graph, config).questions)
        if '"split": "train"' in path.read_text(encoding="utf-8"):
            return path
    return path


def run_cross_domain(graphs: Sequence[Any], quiz: Path, runs_root: Path, settings: dict[str, Any], *, seed: int,
                     preset: str | None, out: Path, charts: bool, progress: bool, command: str | None) -> Report:
    """Train one tiny model per domain, score each on every domain, and build the report."""
    if len(graphs) < 2:
        raise ValueError("cross-domain needs at least two domains: --set domains=GRAPH2[,GRAPH3...]")
    names = [str(g.info.name or g.path) for g in graphs]
    runs_root.mkdir(parents=True, exist_ok=True)
    quizzes = [quiz, *(domain_quiz(g, runs_root, settings, seed) for g in graphs[1:])]
    labs = [TinyLab(g, q, runs_root, settings, seed, preset, progress) for g, q in zip(graphs, quizzes, strict=True)]
    try:
        trained = [lab.trained("grpo") for lab in labs]
        grid = [[labs[j].score(f"{names[i]} → {names[j]}", trained[i]["weights_dir"]).f1 for j in range(len(labs))]
                for i in range(len(labs))]
        scripted = [lab.score("scripted solver", None).f1 for lab in labs]
        before = [lab.score("before GRPO", t["warm_start_dir"]).f1 for lab, t in zip(labs, trained, strict=True)]
    finally:
        for lab in labs:
            lab.close()
    report = Report("cross-domain", "GraphScout Figure 3: cross-domain transfer (answer F1)", setting=[
        f"domains: {', '.join(names)}; quizzes: {', '.join(f'`{q}`' for q in quizzes)}",
        f"tiny models (a Qwen3 of hidden size 64 built from a config; warm start + GRPO at {settings}, seed {seed}, "
        f"preset {preset or 'none'}): pipeline checks, not model results; scored on "
        f"{settings['eval_questions']} test questions per domain", *([f"command: `{command}`"] if command else [])],
        notes=[PAPER_SAYS + " " + PLOTTED])
    table = Table("grid", "Answer F1: trained on (row) × tested on (column)", ["Trained on", *names, "paper"])
    table.rows += [[f"tiny model, {names[i]}", *(f"{v:.3f}" for v in row), "plotted, no number"]
                   for i, row in enumerate(grid)]
    table.rows.append(["scripted solver (no training)", *(f"{v:.3f}" for v in scripted), "plotted, no number"])
    table.rows.append(["own domain, before GRPO", *(f"{v:.3f}" for v in before), "plotted, no number"])
    report.tables.append(table)
    report.runs = [{"label": f"trained on {n}", "folder": str(Path(t["out_dir"]))}
                   for n, t in zip(names, trained, strict=True)]
    if charts:
        report.figures.append(_heatmap(grid, names, out))
    return report


def _heatmap(grid: list[list[float]], names: list[str], out: Path) -> Figure:
    from ..plots import pyplot, save_png

    plt = pyplot()
    figure, axis = plt.subplots(figsize=(1.6 + 1.2 * len(names), 1.2 + 1.0 * len(names)))
    image = axis.imshow(grid, vmin=0.0, vmax=1.0, cmap="Blues")
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            axis.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8)
    axis.set(xticks=range(len(names)), yticks=range(len(names)), xlabel="tested on", ylabel="trained on",
             title="F1, tiny models (pipeline check)")
    axis.set_xticklabels(names)
    axis.set_yticklabels(names)
    figure.colorbar(image)
    path = save_png(figure, out / "cross_domain.png")
    return Figure(path, "Answer F1 trained on × tested on, tiny models (paper: Figure 3)")
