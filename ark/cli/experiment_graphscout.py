"""GraphScout's experiments as ``ark experiment NAME GRAPH --queries QUIZ`` (a GraphScout quiz file):

- ``graphscout-difficulty`` / ``graphscout-lengths`` / ``graphscout-tokens``: Figures 4, 5 and 6, from the Table 1
  rows that run here (offline: the scripted solver; ``--model``: every row), under ``--preset paper``;
- ``quizzer-diversity``: Figures 7 and 8, from the quiz file alone;
- ``graphscout-ablations`` / ``graphscout-tool-failures``: Table 2 and Table 5 with tiny GRPO models (settings as
  ``--set KEY=VALUE``, :data:`ark.experiments.graphscout_tiny.TINY_SETTINGS`);
- ``cross-domain``: Figure 3 with tiny GRPO models, GRAPH and ``--set domains=OTHER[,OTHER...]``.

``--charts`` writes the PNG plots where the paper plots.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .common import console, err_console, fail, load_graph
from .method_options import MethodSelection

if TYPE_CHECKING:
    from ..experiments.report import Report
    from ..graph import KnowledgeGraph

BEHAVIOUR = ("graphscout-difficulty", "graphscout-lengths", "graphscout-tokens")
TINY = ("graphscout-ablations", "graphscout-tool-failures", "cross-domain")
GRAPHSCOUT_EXPERIMENTS = (*BEHAVIOUR, "quizzer-diversity", *TINY)


def run_graphscout_experiment(name: str, graph_name: str, queries: Path, out: Path | None, runs: Path,
                              limit: int | None, k: int, concurrency: int, progress: bool, charts: bool,
                              selection: MethodSelection) -> None:
    """Run GraphScout experiment ``name``, print its tables and write its report folder."""
    from ..plots import ChartsUnavailable, pyplot

    if charts:
        try:
            pyplot()
        except ChartsUnavailable as exc:
            fail(str(exc))
    if selection.method != "ark":
        fail(f"{name} runs GraphScout's own rows: leave out --method")
    command = shlex.join(["ark", "experiment", *sys.argv[2:]]) if sys.argv[1:2] == ["experiment"] else None
    target = out or Path("reports") / f"{Path(graph_name).name}-{name}-{Path(str(queries)).stem}"
    graph = load_graph(graph_name)
    report: Report
    if name == "quizzer-diversity":
        report = _diversity(graph, queries, limit, target, charts, command)
    elif name in BEHAVIOUR:
        report = _behaviour(name, graph, queries, limit, runs, k, concurrency, progress, charts, selection, command,
                            target)
    else:
        report = _tiny(name, graph, queries, runs, progress, charts, selection, command, target)
    report.write(target)
    print_report(report, target)


def print_report(report: Report, target: Path) -> None:
    """An experiment's tables, the plots it wrote and where its report is."""
    for table in report.tables:
        console.print(table.markdown())
    for figure in report.figures:
        err_console.print(f"[dim]plot: {figure.path}[/]")
    console.print(f"Report: {target / 'report.md'}")


def _diversity(graph: KnowledgeGraph, queries: Path, limit: int | None, target: Path, charts: bool,
               command: str | None) -> Report:
    from ..experiments.quizzer_diversity import diversity_report
    from ..methods.graphscout.quiz import read_graphscout_quiz

    try:
        records = [q.record for q in read_graphscout_quiz(queries, graph)][:limit]
    except ValueError as exc:
        fail(str(exc))
    return diversity_report(records, graph_name=graph.info.name or str(graph.path), source=str(queries), out=target,
                            charts=charts, command=command)


def _behaviour(name: str, graph: KnowledgeGraph, queries: Path, limit: int | None, runs: Path, k: int, concurrency: int,
               progress: bool, charts: bool, selection: MethodSelection, command: str | None,
               target: Path) -> Report:
    from ..experiments.graphscout_behaviour import behaviour_report
    from ..experiments.graphscout_table import row_options, run_rows
    from ..methods import MethodContext, MethodError
    from .eval_cmd import _open_queries
    from .experiment_cmd import _query_source, _table_policy, _table_preset, _toml_tables

    if selection.sets:
        fail(f"{name} runs every Table 1 row: leave out --set (--config FILE.toml sets a method's options in a "
             "table named after it, e.g. [graphscout])")
    try:
        options = row_options(_toml_tables(selection.config)) if selection.config else {}
    except MethodError as exc:
        fail(str(exc))
    selected = _open_queries(graph, queries, None, False, limit, False)
    source = _query_source(queries, None, False, limit)
    preset = _table_preset(selection)
    rows = run_rows(graph, MethodContext(llm=_table_policy(selection), seed=selection.seed), selected, source, runs,
                    k=k, concurrency=concurrency, progress=progress, console=err_console, options=options,
                    preset=preset)
    setting = [f"graph: {graph.info.name or graph.path}; queries: `{source}` ({len(selected)})",
               f"preset: {preset or 'none'}; seed: {selection.seed}; offline rows: GraphScout's scripted solver "
               "(a deterministic policy, not an LLM)", *([f"command: `{command}`"] if command else [])]
    return behaviour_report(name, rows, setting, target, charts)


def _tiny(name: str, graph: KnowledgeGraph, queries: Path, runs: Path, progress: bool, charts: bool,
          selection: MethodSelection, command: str | None, target: Path) -> Report:
    """Tables 2 and 5 are tables in the paper (no plots); Figure 3 is a grid (plotted with ``charts``)."""
    from ..experiments.cross_domain import run_cross_domain
    from ..experiments.graphscout_tiny import run_tiny_experiment, tiny_settings
    from ..methods import MethodError
    from .experiment_cmd import _table_preset

    domains = [p.split("=", 1)[1] for p in selection.sets if p.startswith("domains=")]
    try:
        settings = tiny_settings([p for p in selection.sets if not p.startswith("domains=")])
    except (MethodError, ValueError) as exc:
        fail(f"{name}: {exc}")
    if (name == "cross-domain") != bool(domains):
        fail(f"{name}: --set domains=GRAPH[,GRAPH...] " + ("names the other domains" if name == "cross-domain" else
                                                            "belongs to cross-domain alone"))
    try:
        if name == "cross-domain":
            graphs = [graph, *(load_graph(d.strip()) for d in ",".join(domains).split(",") if d.strip())]
            return run_cross_domain(graphs, queries, runs, settings, seed=selection.seed,
                                    preset=_table_preset(selection), out=target, charts=charts, progress=progress,
                                    command=command)
        return run_tiny_experiment(name, graph, queries, runs, settings, seed=selection.seed,
                                   preset=_table_preset(selection), out=target, progress=progress, command=command)
    except ImportError as exc:
        fail(f"{name} trains tiny models: it needs the training extra ({exc}); pip install 'ark-kg[train]'")
    except ValueError as exc:
        fail(f"{name}: {exc}")
