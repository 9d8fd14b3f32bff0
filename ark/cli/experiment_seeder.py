"""``ark experiment khop-growth GRAPH --queries FILE [--set hops=3 --set seeds=3 --set seeds_by=dense]``: SeedER's
k-hop growth (Figure 3(a), Figure 5), offline; its settings come as ``--set`` keys (no method runs)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from .common import console, err_console, fail, load_graph

KHOP_SETTINGS = {"hops": 3, "seeds": 3, "seeds_by": "dense"}


def khop_settings(pairs: list[str]) -> dict[str, Any]:
    """``--set`` pairs as khop-growth settings; one line naming the valid keys for any other."""
    from ..methods import MethodError
    from ..methods.options import parse_set_values

    try:
        given = parse_set_values(pairs)
    except MethodError as exc:
        fail(str(exc))
    unknown = sorted(set(given) - set(KHOP_SETTINGS))
    if unknown:
        fail(f"khop-growth: unknown setting {unknown[0]!r}; valid: {', '.join(KHOP_SETTINGS)} (--set KEY=VALUE)")
    return {**KHOP_SETTINGS, **given}


def run_khop_growth(graph_name: str, queries: Path, out: Path | None, split: str | None, human: bool,
                    limit: int | None, progress: bool, sets: list[str]) -> None:
    """Compute, print and write the k-hop growth report (report.md, results.json, khop_growth.png)."""
    from ..experiments.khop_growth import khop_growth, khop_report
    from ..plots import ChartsUnavailable, pyplot
    from .eval_cmd import _open_queries
    from .experiment_cmd import _query_source

    settings = khop_settings(sets)
    graph = load_graph(graph_name)
    selected = _open_queries(graph, queries, split, human, limit, False)
    try:
        sizes = khop_growth(graph, selected, hops=int(settings["hops"]), seeds=int(settings["seeds"]),
                            seeds_by=str(settings["seeds_by"]), progress=progress)
    except (ValueError, TypeError) as exc:
        fail(f"khop-growth: {exc}")
    except ImportError as exc:
        fail(f"khop-growth: dense seeds need the dense extra ({exc}); pip install 'ark-kg[dense]' or "
             "--set seeds_by=bm25")
    target = out or Path("reports") / f"{Path(graph_name).name}-khop-growth-{Path(str(queries)).stem}"
    try:
        pyplot()
        charts = True
    except ChartsUnavailable:
        charts = False
    command = shlex.join(["ark", "experiment", *sys.argv[2:]]) if sys.argv[1:2] == ["experiment"] else None
    source = _query_source(queries, split, human, limit)
    report = khop_report(graph, sizes, questions=len(selected), seeds=int(settings["seeds"]),
                         seeds_by=str(settings["seeds_by"]), source=source, out=target, charts=charts,
                         command=command)
    report.write(target)
    console.print(report.tables[0].markdown())
    for figure in report.figures:
        err_console.print(f"[dim]plot: {figure.path}[/]")
    console.print(f"Report: {target / 'report.md'}")
