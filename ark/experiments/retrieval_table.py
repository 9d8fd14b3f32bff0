"""ARK's and SeedER's retrieval tables as a command: ``ark experiment paper-table GRAPH --paper ark|seeder --table
1|3 --queries FILE [--model M]``.

Every row of the paper's table (:mod:`.paper_tables`) is kept, in the paper's order and groups. A row whose method
runs here becomes an ``ark eval`` run folder (resumable, shared by configuration), scored on the paper's metrics
and shown beside the paper's numbers for the matching STaRK benchmark, labelled with the benchmark, split and
backbone. A row that needs a chat model without one says ``needs --model``; one that cannot run here says why
(``not run: needs LLM fine-tuning`` for GraphFlow, SFT and PRM); a method not registered in this build says ``not
available``; a learned method without a trained model says which command makes one. Nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .paper_tables import STARK_GRAPHS, PaperRow, PaperTable
from .report import Report, Table
from .runs import run_key

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query
    from ..methods import MethodContext


@dataclass
class MeasuredRow:
    """A row of the paper's table and what happened to it here."""

    row: PaperRow
    status: str  # "ran", "needs --model", "not available: ...", "not run: ..."
    model: str | None = None
    overall: dict[str, float] | None = None
    folder: Path | None = None


def table_options(table: PaperTable, tables: Mapping[str, Any]) -> dict[str, Any]:
    """Per-method options from a TOML file's tables named after the rows' methods (``[seeder] model = "DIR"``);
    ``MethodError`` names a table that is no row's method. Options of methods not registered here are kept as
    given (their rows say ``not available``)."""
    from ..methods import MethodError

    methods = sorted({row.method for row in table.rows if row.method})
    chosen = {}
    for name, values in tables.items():
        if name not in methods or not isinstance(values, Mapping):
            raise MethodError(f"paper-table options: {name!r} is not a table named after a row's method; valid: "
                              f"{', '.join(methods)}")
        chosen[name] = dict(values)
    return chosen


def _run_row(row: PaperRow, graph: KnowledgeGraph, context: MethodContext, queries: Sequence[Query], source: str,
             runs_root: Path, k: int, options: Mapping[str, Any], eval_settings: Mapping[str, Any],
             preset: str | None = None) -> MeasuredRow:
    from ..eval.experiment import run_eval
    from ..methods import MethodError, get_method_spec
    from ..methods.choice import MethodChoice
    from ..methods.presets import preset_if_any
    from ..methods.registry import resolve_truncate

    if row.method is None:
        return MeasuredRow(row, row.not_run or "not run here")
    try:
        spec = get_method_spec(row.method)
    except MethodError:
        return MeasuredRow(row, f"not available: method {row.method!r} is not registered in this build")
    if context.llm is None and spec.uses_llm and not spec.offline:
        return MeasuredRow(row, "needs --model")
    try:
        choice = MethodChoice.make(row.method, {**dict(options.get(row.method) or {}), **dict(row.options)},
                                   context, preset=preset_if_any(spec, preset))
        folder = runs_root / f"{row.method}-{run_key(choice, source, k)}"
        outcome = run_eval(graph, choice, queries, folder, queries_source=source, k=k,
                           truncate=resolve_truncate(spec, None), **eval_settings)
    except (MethodError, ImportError, ValueError) as exc:  # a missing extra, model folder or endpoint
        return MeasuredRow(row, f"not run: {' '.join(str(exc).split())}")
    summary = outcome.summary or {}
    if not summary:
        return MeasuredRow(row, "failed queries: rerun to retry", choice.llm_name, None, folder)
    return MeasuredRow(row, "ran", choice.llm_name, dict(summary["overall"]), folder)


def run_table(table: PaperTable, graph: KnowledgeGraph, context: MethodContext, queries: Sequence[Query],
              source: str, runs_root: Path, k: int = 100, concurrency: int = 4, progress: bool = True,
              console: Any = None, options: Mapping[str, Any] | None = None,
              preset: str | None = "paper") -> list[MeasuredRow]:
    """Run (or resume) every row of ``table`` that can run with ``context`` into ``runs_root``, the methods with
    ``preset`` over their options where they have it (the paper's settings by default; None: none)."""
    settings = {"concurrency": concurrency, "progress": progress, "console": console}
    results = []
    for row in table.rows:
        if console is not None and row.method:
            console.print(f"[bold]paper-table[/]: {row.label} ({row.method})")
        results.append(_run_row(row, graph, context, queries, source, runs_root, k, options or {}, settings, preset))
    return results


def benchmark_for(table: PaperTable, graph: KnowledgeGraph) -> tuple[str, bool]:
    """The table's benchmark column for ``graph`` and whether the graph is that benchmark (else PRIME, the
    biomedical graph nearest to HPO, for reference only)."""
    name = (graph.info.name or (graph.path.name if graph.path else "")).lower()
    return (STARK_GRAPHS[name], True) if name in STARK_GRAPHS else ("PRIME", False)


def _cell(value: float | None, scale: float) -> str:
    if value is None:
        return "—"
    return f"{value * scale:.2f}" if scale != 1 else f"{value:.3f}"


def _run_with(result: MeasuredRow) -> str:
    if result.status != "ran":
        return "—"
    if result.model == "offline":
        return "offline policy (not an LLM)"
    return result.model or "no model (learned or lexical)"


def build_report(table: PaperTable, results: Sequence[MeasuredRow], graph: KnowledgeGraph, source: str,
                 n_queries: int, command: str | None = None) -> Report:
    """Our rows beside the paper's (one benchmark), then the paper's full table as reported."""
    bench, same = benchmark_for(table, graph)
    graph_name = graph.info.name or graph.path
    report = Report("paper-table", table.title)
    report.setting = [
        f"graph: {graph_name}; queries: `{source}` ({n_queries}); ours are measured here, the paper's are copied "
        "from it, never measured",
        f"paper columns: {table.title.split(':')[0]}, {bench}, {table.split}"
        + ("" if same else f" (this graph is not a STaRK graph: the {bench} column is for reference only, not the "
                           "same benchmark)") + "; each row's backbone as the paper states it",
    ]
    if command:
        report.setting.append(f"command: `{command}`")
    scale_note = " (×100)" if table.scale != 1 else ""
    columns = ["Group", "Method", "Ours: run with", "Status", "n",
               *[f"Ours {h}{scale_note}" for h in table.headers],
               *[f"Paper: {bench} {h}" for h in table.headers], "Paper: backbone"]
    ours = Table("ours", f"Ours on {graph_name} beside {table.title.split(':')[0]} ({bench}, {table.split})",
                 columns)
    for result in results:
        overall, reported = result.overall or {}, result.row.reported.get(bench)
        ours.rows.append([
            result.row.group, result.row.label, _run_with(result), result.status,
            str(int(overall["n"])) if "n" in overall else "—",
            *[_cell(overall.get(metric), table.scale) for metric in table.metrics],
            *[_cell(v, 1.0) if table.scale == 1 else f"{v:.2f}" for v in (reported or ())],
            *(["—"] * len(table.metrics) if not reported else []), result.row.backbone])
    report.tables.append(ours)
    full = Table("paper", f"As reported: {table.title} ({table.split})",
                 ["Group", "Method", "Backbone", *[f"{b} {h}" for b in table.benchmarks for h in table.headers]])
    for row in table.rows:
        if row.reported:
            full.rows.append([row.group, row.label, row.backbone, *(
                f"{v:.2f}" if table.scale != 1 else f"{v:.3f}" for b in table.benchmarks for v in row.reported[b])])
    report.tables.append(full)
    report.notes += [f"{r.row.label}: {r.row.note}" for r in results if r.row.note]
    waiting = [r.row.label for r in results if r.status == "needs --model"]
    if waiting:
        report.notes.append(f"rows marked needs --model ({', '.join(waiting)}) prompt a chat model: rerun with "
                            "--model NAME --base-url URL to fill them")
    report.runs = [{"label": r.row.label, "folder": str(r.folder)} for r in results if r.folder is not None]
    return report
