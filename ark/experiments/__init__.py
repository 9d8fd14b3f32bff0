"""The ARK paper's experiments as commands (``ark experiment NAME GRAPH --queries FILE``).

Each experiment runs a few configurations of the ``ark`` method (built through the registry with
``MethodChoice.make("ark", options)``, on top of the options given with ``--set``/``--config``), each into an
ordinary ``ark eval`` run folder under the runs root (resumable; a configuration already run on the same queries is
reused, also by other experiments), then writes a report folder: ``report.md`` with Markdown tables and the PNG
plots, and ``results.json``. Any chat model or the offline policy drives the agents; every table row says which,
and the truncation it was scored with. The experiments are listed in :mod:`ark.experiments.paper`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .paper import EXPERIMENTS, Experiment, Settings
from .report import Report, truncation_label
from .runs import Variant, VariantRun, run_variants, select_queries

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query
    from ..methods.choice import MethodChoice

__all__ = ["EXPERIMENTS", "Experiment", "Report", "Settings", "Variant", "VariantRun", "get_experiment",
           "run_experiment"]


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; ``ValueError`` lists the valid names."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; valid: {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]


def run_experiment(
    name: str,
    graph: KnowledgeGraph,
    base: MethodChoice,
    queries: Sequence[Query],
    queries_source: str,
    out: Path,
    runs_root: Path,
    truncate: int | None,
    fraction: float | None = None,
    seed: int = 0,
    settings: Settings | None = None,
    k: int = 100,
    concurrency: int = 4,
    progress: bool = True,
    console: Any = None,
    command: str | None = None,
) -> tuple[Report, list[VariantRun]]:
    """Run (or resume) experiment ``name`` and write its report folder ``out``; returns the report and its runs.

    ``fraction`` (default: the experiment's own, 10% for the ablations as in the paper) selects a seeded random
    subset of ``queries``.
    """
    experiment = get_experiment(name)
    settings = settings or Settings()
    fraction = experiment.default_fraction if fraction is None else fraction
    selected = select_queries(queries, fraction, seed)
    source = queries_source if fraction >= 1 else f"{queries_source}#random-{fraction:g}-seed-{seed}"

    def started(variant: Variant, folder: Path) -> None:
        if console is not None:
            console.print(f"[bold]{experiment.name}[/]: {variant.label} -> {folder}")

    runs = run_variants(graph, base, experiment.variants(settings), selected, source, runs_root, truncate, k=k,
                        concurrency=concurrency, progress=progress, console=console, on_start=started)
    report = Report(experiment.name, f"{experiment.title} ({experiment.paper} of the ARK paper)")
    subset = (f"a seeded random {100 * fraction:g}% of them (seed {seed}): {len(selected)} queries"
              if fraction < 1 else f"all {len(selected)}")
    report.setting = [
        f"graph: {graph.info.name or graph.path}; queries: `{queries_source}`, {subset}",
        f"model / policy: {runs[0].model}" + (" (the offline policy: a deterministic scripted agent, not an LLM)"
                                              if runs[0].model == "offline" else ""),
        f"truncation: {truncation_label(truncate)} (rankings cut before all metrics; ARK paper, Appendix A.2)",
        "metrics ×100, STaRK semantics; base options: " + _differences(base),
    ]
    if command:
        report.setting.append(f"command: `{command}`")
    failed = sum(len(r.outcome.stats.failed) for r in runs)
    if failed:
        report.notes.append(f"{failed} query run(s) failed and score 0; rerun the same command to retry them.")
    out.mkdir(parents=True, exist_ok=True)
    experiment.report(report, runs, settings, out)
    report.runs = [{"label": r.variant.label, "folder": str(r.folder), "model": r.model,
                    "truncation": truncation_label(r.truncate), "options": r.choice.config()["method_options"]}
                   for r in runs]
    report.write(out)
    return report, runs


def _differences(choice: MethodChoice) -> str:
    """The options that differ from the method's defaults, as ``key=value`` (or "the defaults")."""
    from ..methods.options import options_dict

    defaults = options_dict(choice.spec.make_options({}))
    chosen = options_dict(choice.options)
    changed = [f"{key}={value}" for key, value in _flat(chosen).items() if _flat(defaults).get(key) != value]
    return ", ".join(changed) if changed else "the defaults"


def _flat(values: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def with_settings(settings: Settings, **changes: Any) -> Settings:
    """``settings`` with the given fields replaced (None values ignored)."""
    return replace(settings, **{k: v for k, v in changes.items() if v is not None})
