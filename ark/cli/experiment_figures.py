"""``ark experiment seeder-budgets|seeder-latency|seeder-stability|seeder-val-test|distill-budget GRAPH -q FILE``:
SeedER's Figures 6, 4, 7 and Table 6, ARK's Table 5 / Figure 4 at a tiny size (and khop-growth's dispatch, Figures
3a/5, to :mod:`.experiment_seeder`), offline, under ``--preset paper`` unless ``--preset none``; their settings come
as ``--set`` keys. Every report records the versions, the preset, the seed, the settings and the command."""

from __future__ import annotations

import contextlib
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .common import console, err_console, fail, load_graph

if TYPE_CHECKING:
    from ..experiments.report import Report
    from ..graph import KnowledgeGraph
    from .method_options import MethodSelection

# Each experiment's --set keys and defaults (None: the preset's value for the graph, or ours without a preset).
SETTINGS: dict[str, dict[str, Any]] = {
    "seeder-budgets": {"budgets": [10, 20, 50, 100, 150], "seeds": None, "hop_share": [0.4, 0.6]},
    "seeder-latency": {"model": None, "epochs": None, "val_share": 0.2, "test_share": 0.2, "train": {}},
    "seeder-stability": {"runs": 10, "epochs": 10, "val_share": 0.2, "test_share": 0.2, "train": {}},
    "seeder-val-test": {"runs": 10, "epochs": 10, "val_share": 0.2, "test_share": 0.2, "train": {}},
    "distill-budget": {"budgets": [6, 60], "test": 20, "ark": {}, "sft": {"learning_rate": 1e-3, "epochs": 3,
                                                                           "batch_size": 2, "max_length": 2048,
                                                                           "cpu_threads": 1},
                       "max_new_tokens": 96},
}
FIGURES = ("khop-growth", *SETTINGS)


def figure_settings(name: str, pairs: list[str]) -> dict[str, Any]:
    """``--set`` pairs as the experiment's settings; one line naming the valid keys for any other."""
    from ..methods import MethodError
    from ..methods.options import parse_set_values

    try:
        given = parse_set_values(pairs)
    except MethodError as exc:
        fail(str(exc))
    unknown = sorted(set(given) - set(SETTINGS[name]))
    if unknown:
        fail(f"{name}: unknown setting {unknown[0]!r}; valid: {', '.join(SETTINGS[name])} (--set KEY=VALUE)")
    return {**SETTINGS[name], **given}


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    found = [f"ark {__version__}"]
    for package in ("torch", "numpy", "scipy", "sentence-transformers"):
        with contextlib.suppress(PackageNotFoundError):
            found.append(f"{package} {version(package)}")
    return "versions: " + ", ".join(found)


def run_figure(name: str, graph_name: str, queries: Path, out: Path | None, split: str | None, human: bool,
               limit: int | None, progress: bool, runs_root: Path, selection: MethodSelection) -> None:
    """Run experiment ``name``, print its tables and write its report folder."""
    if name == "khop-growth":  # SeedER's Figure 3(a) / 5: a graph statistic, no method runs
        from .experiment_seeder import run_khop_growth
        return run_khop_growth(graph_name, queries, out, split, human, limit, progress, selection.sets)
    from ..methods.presets import NO_PRESET
    from .eval_cmd import _open_queries
    from .experiment_cmd import _experiment_preset, _query_source

    settings = figure_settings(name, selection.sets)
    preset = _experiment_preset(selection)
    graph = load_graph(graph_name)
    selected = _open_queries(graph, queries, split, human, limit, False)
    source = _query_source(queries, split, human, limit)
    command = shlex.join(["ark", "experiment", *sys.argv[2:]]) if sys.argv[1:2] == ["experiment"] else None
    setting = [f"queries: {source}", f"preset: {preset}", f"seed: {selection.seed}", f"settings: {settings}",
               versions(), *([f"command: `{command}`"] if command else [])]
    target = out or Path("reports") / f"{Path(graph_name).name}-{name}-{Path(str(queries)).stem}"
    charts = _charts()
    try:
        if name == "seeder-budgets":
            report = _budgets(graph, selected, settings, preset != NO_PRESET, setting, source, target, charts,
                              progress)
        elif name == "distill-budget":
            report = _distill(graph, selected, settings, preset, selection.seed, setting, target, charts, runs_root,
                              source)
        elif name == "seeder-latency":
            report = _latency(graph, selected, settings, preset, selection.seed, setting, target, charts, progress,
                              runs_root, source)
        else:
            report = _training(name, graph, selected, settings, preset, selection.seed, setting, source, target,
                               charts, progress, runs_root)
    except (ValueError, TypeError) as exc:
        fail(f"{name}: {exc}")
    except ImportError as exc:
        fail(f"{name} needs the dense and seeder extras ({exc}); pip install 'ark-kg[dense,seeder]'")
    report.write(target)
    for table in report.tables:
        console.print(table.markdown())
    for figure in report.figures:
        err_console.print(f"[dim]plot: {figure.path}[/]")
    console.print(f"Report: {target / 'report.md'}")


def _charts() -> bool:
    from ..plots import ChartsUnavailable, pyplot

    try:
        pyplot()
    except ChartsUnavailable:
        return False
    return True


def _graph_name(graph: KnowledgeGraph) -> str:
    return graph.info.label()


def _budgets(graph: KnowledgeGraph, queries: list, settings: dict[str, Any], paper: bool, setting: list[str],
             source: str, target: Path, charts: bool, progress: bool) -> Report:
    from ..experiments.seeder_budgets import budget_sweep, budgets_report
    from ..methods.seeder.config import train_settings

    seeds = settings["seeds"] or (train_settings("paper", graph=_graph_name(graph)).search.seeds if paper else 3)
    budgets = [int(b) for b in settings["budgets"]]
    points = budget_sweep(graph, queries, budgets, seeds=int(seeds), hop_share=settings["hop_share"],
                          progress=progress)
    return budgets_report(graph, points, questions=sum(1 for q in queries if q.answer_ids), seeds=int(seeds),
                          hop_share=settings["hop_share"], setting=setting, out=target,
                          charts=charts)


def _seeder_settings(graph: KnowledgeGraph, settings: dict[str, Any], preset: str) -> Any:
    from ..methods.presets import NO_PRESET
    from ..methods.seeder.config import train_settings

    overrides = {**settings["train"], **({"epochs": int(settings["epochs"])} if settings["epochs"] else {})}
    return train_settings("paper" if preset != NO_PRESET else "prime", overrides=overrides, graph=_graph_name(graph))


def _latency(graph: KnowledgeGraph, queries: list, settings: dict[str, Any], preset: str, seed: int,
             setting: list[str], target: Path, charts: bool, progress: bool, runs_root: Path, source: str) -> Report:
    from ..experiments import seeder_latency as latency
    from ..experiments import seeder_stability as stability
    from ..methods.presets import NO_PRESET
    from ..methods.seeder.pipeline import Question, train_seeder

    split = stability.split_questions([q for q in queries if q.answer_ids], seed, float(settings["val_share"]),
                                      float(settings["test_share"]))
    model = settings["model"]
    trained = _seeder_settings(graph, settings, preset)
    if model is None:
        folder = stability.cache_path(runs_root, graph, source, trained.model_copy(update={"seed": seed}), 1, seed)
        model = str(folder.with_name(folder.stem.replace("training", "latency-model")))
        if not (Path(model) / "model.json").is_file():
            def questions(part: list) -> list:
                return [Question(q.id, q.query, tuple(graph.index_of(a) for a in q.answer_ids)) for q in part]
            train_seeder(graph, questions(split.train), model, trained.model_copy(update={"seed": seed}),
                         val=questions(split.val), progress=progress, log=lambda m: err_console.print(f"[dim]{m}[/]"))
    chosen = None if preset == NO_PRESET else preset
    options: dict[str, dict[str, Any]] = {"dense": {}, "khop-filter": {}, "seeder": {"model": model}}
    points = [latency.measure(graph, label, method, options[method], split.test, chosen)
              for label, method in latency.ROWS]
    setting = [f"graph: {_graph_name(graph)} ({graph.num_nodes:,} nodes)", stability.split_summary(split),
               f"SeedER model: {model}" + (" (trained here: tiny, CPU)" if settings["model"] is None else ""),
               *setting]
    return latency.latency_report(graph, points, questions=len(split.test), setting=setting, out=target,
                                  charts=charts)


def _distill(graph: KnowledgeGraph, queries: list, settings: dict[str, Any], preset: str, seed: int,
             setting: list[str], target: Path, charts: bool, runs_root: Path, source: str) -> Report:
    import hashlib

    from ..experiments.distill_budget import distill_report, run_backbones
    from ..methods.ark.options import ArkOptions
    from ..methods.presets import NO_PRESET, preset_if_any, with_preset
    from ..methods.registry import get_method_spec

    spec = get_method_spec("ark")
    options = spec.make_options(with_preset(spec, preset_if_any(spec, None if preset == NO_PRESET else preset),
                                            settings["ark"]))
    if not isinstance(options, ArkOptions):
        raise TypeError(f"the ark method's options are {type(options).__name__}, not ArkOptions")
    order = np.random.default_rng(seed).permutation(len(queries))
    answered = [queries[i] for i in order if queries[i].answer_ids]
    n_test = int(settings["test"])
    test, train = answered[:n_test], answered[n_test:]
    budgets = sorted(int(b) for b in settings["budgets"])
    if not test or len(train) < max(budgets):
        raise ValueError(f"{len(answered)} answered questions: {n_test} test questions and a budget of "
                         f"{max(budgets)} training questions need {n_test + max(budgets)}")
    key = hashlib.sha256(repr((source, settings, preset, seed)).encode()).hexdigest()[:12]
    work = runs_root / f"distill-budget-{key}"
    work.mkdir(parents=True, exist_ok=True)
    rows = run_backbones(graph, train, test, options, budgets, work, dict(settings["sft"]),
                         int(settings["max_new_tokens"]), seed)
    setting = [f"graph: {_graph_name(graph)} ({graph.num_nodes:,} nodes)",
               f"questions: {len(train)} training (budgets {budgets}), {len(test)} test",
               f"ARK: {options.n_agents} agents, T_max {options.max_steps}; students: tiny random-weight Qwen3 "
               f"(offline tokenizer), full fine-tuning on CPU", f"work folder: {work}", *setting]
    return distill_report(rows, name=_graph_name(graph), questions=len(test), setting=setting, out=target,
                          charts=charts)


def _training(name: str, graph: KnowledgeGraph, queries: list, settings: dict[str, Any], preset: str, seed: int,
              setting: list[str], source: str, target: Path, charts: bool, progress: bool, runs_root: Path
              ) -> Report:
    from ..experiments import seeder_stability as stability

    trained = _seeder_settings(graph, settings, preset)
    split = stability.split_questions([q for q in queries if q.answer_ids], seed, float(settings["val_share"]),
                                      float(settings["test_share"]))
    cache = stability.cache_path(runs_root, graph, source, trained, int(settings["runs"]), seed)
    histories = stability.train_runs(graph, split, trained, int(settings["runs"]), seed, cache, progress,
                                     log=lambda m: err_console.print(f"[dim]{m}[/]"))
    setting = [f"graph: {_graph_name(graph)} ({graph.num_nodes:,} nodes)", stability.split_summary(split),
               f"SeedER: {trained.architecture} architecture, hidden {trained.hidden}, {trained.layers} layers, "
               f"sizes {trained.search.sizes}, caps {trained.search.caps}, {trained.epochs} epochs "
               f"(tiny policy trained here on CPU; MiniLM features)", f"runs cache: {cache}", *setting]
    if name == "seeder-stability":
        return stability.stability_report(histories, name=_graph_name(graph), setting=setting, out=target,
                                          charts=charts)
    return stability.val_test_report(histories, name=_graph_name(graph), setting=setting)
