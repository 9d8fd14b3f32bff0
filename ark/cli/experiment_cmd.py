"""``ark experiment NAME GRAPH --queries FILE``: one of the ARK paper's experiments, into a report folder."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .common import GRAPH_HELP, console, err_console, fail, load_graph, make_policy
from .experiment_figures import FIGURES, run_figure
from .experiment_graphscout import GRAPHSCOUT_EXPERIMENTS, print_report, run_graphscout_experiment
from .method_options import MethodSelection, method_command, method_selection, resolve_choice

if TYPE_CHECKING:
    from ..llm import ChatPolicy


def _ints(text: str | None, flag: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        fail(f"{flag} {text!r}: expected comma-separated whole numbers, e.g. 1,2,3")
    if not values or min(values) < 1:
        fail(f"{flag} {text!r}: expected numbers >= 1")
    return values


EXPERIMENTS_HELP = ("ablations (Table 2), fusion (Table 3), relevance (Table 4), budget (Figure 2), agents-vs-steps "
                    "(Table 8), tool-use (Figure 3, Tables 9-10), neighborhood (Figure 5); paper-table with --paper "
                    "graphscout (GraphScout's Table 1: its baselines and the solver beside the reported numbers), "
                    "ark --table 1 (STaRK retrievers and agents) or seeder --table 1|3 (graph heuristics; LLM "
                    "agents), every row kept: measured beside the paper's numbers, or marked why not. SeedER "
                    "offline: seeder-budgets (Figure 6), seeder-latency (Figure 4), seeder-stability (Figure 7), "
                    "seeder-val-test (Table 6); ARK offline, tiny models: distill-budget (Table 5 / Figure 4). "
                    "GraphScout "
                    "(--queries: a GraphScout quiz): graphscout-ablations (Table 2), graphscout-tool-failures (Table "
                    "5), both with tiny GRPO models (--set steps=N ...); graphscout-difficulty, graphscout-lengths, "
                    "graphscout-tokens (Figures 4-6); quizzer-diversity (Figures 7-8); --charts plots them.")
ChartsOption = Annotated[bool, typer.Option(help="GraphScout's experiments: also write the PNG plots where the paper "
                                            "plots (the others always plot).")]
PaperOption = Annotated[str | None, typer.Option(help="paper-table: whose table (graphscout, ark, seeder).")]
TableOption = Annotated[int, typer.Option("--table", min=1, help="paper-table: the table's number (ark: 1; seeder: "
                                          "1 or 3; graphscout: 1).")]
JudgeOption = Annotated[bool, typer.Option("--judge", help="paper-table: also grade answers with the LLM judge "
                                           "(model-graded, labelled; --judge-model or the [llm] settings).")]
JudgeModelOption = Annotated[str | None, typer.Option(help="paper-table: the judge's chat model.")]


def experiment(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help=EXPERIMENTS_HELP)],
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)],
    queries: Annotated[Path, typer.Option("--queries", "-q", help="Our .jsonl query file, a STaRK QA folder or a "
                                          "STaRK stark_qa.csv.")],
    out: Annotated[Path | None, typer.Option(help="Report folder (default reports/<graph>-<NAME>-<queries>).")]
    = None,
    runs: Annotated[Path, typer.Option(help="Where the configurations' run folders go; an experiment rerun with the "
                                       "same settings resumes them, and experiments sharing a configuration share "
                                       "its run.")] = Path("runs/experiments"),
    fraction: Annotated[float | None, typer.Option(min=0.0, max=1.0, help="Run on a seeded random fraction of the "
                                                   "queries (default 0.1 for ablations as in the paper, else 1).")]
    = None,
    agents: Annotated[str | None, typer.Option(help="budget: parallel agents, comma-separated (default 1,2,3).")]
    = None,
    steps: Annotated[str | None, typer.Option(help="budget: T_max values, comma-separated (default 5,10,20).")]
    = None,
    t: Annotated[int | None, typer.Option("--t", min=1, help="agents-vs-steps: T (1 agent gets 3T steps, 3 agents "
                                          "T each; default 10).")] = None,
    truncate: Annotated[int | None, typer.Option(min=0, help="Cut rankings to the top N before all metrics "
                                                 "(default: ark's 20, as the paper; 0: none).")] = None,
    split: Annotated[str | None, typer.Option(help="STaRK split (train, val, test); STaRK files only.")] = None,
    human: Annotated[bool, typer.Option("--human", help="STaRK: the human-generated questions.")] = False,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N queries (before --fraction).")] = None,
    k: Annotated[int, typer.Option("--k", min=1, help="Nodes kept per query.")] = 100,
    concurrency: Annotated[int, typer.Option(min=1, help="Queries in flight at once (with a model).")] = 4,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
    paper: PaperOption = None,
    judge: JudgeOption = False,
    judge_model: JudgeModelOption = None,
    table: TableOption = 1,
    charts: ChartsOption = False,
) -> None:
    """Run one of the papers' experiments into a report folder (report.md, PNG plots, results.json); a rerun
    resumes it. Under --preset paper unless --preset none; the method is ark (--set/--config: its base options;
    --model/--base-url/--offline: the model, else the offline policy); --seed also seeds the query subset.
    khop-growth (SeedER Figure 3a/5, no method): --set hops=3 --set seeds=3 --set seeds_by=dense|bm25."""
    selection = method_selection(ctx)
    from ..eval import RunFolderError
    from ..experiments import run_experiment
    from ..methods import MethodError
    from ..methods.registry import resolve_truncate
    from .eval_cmd import _open_queries

    if name in FIGURES:  # SeedER's Figures 3a/5 (khop-growth), 6, 7 and Table 6: ark/cli/experiment_figures.py
        return run_figure(name, graph_name, queries, out, split, human, limit, progress, runs, selection)
    selection.preset = _experiment_preset(selection)
    if name in GRAPHSCOUT_EXPERIMENTS:  # GraphScout's Tables 2 and 5, Figures 4-8
        return run_graphscout_experiment(name, graph_name, queries, out, runs, limit, k, concurrency, progress, charts,
                                         selection)
    if name == "paper-table" and (paper in ("ark", "seeder") or (paper == "graphscout" and table != 1)):
        return _retrieval_table(graph_name, queries, paper, table, out, runs, split, human, limit, k, concurrency,
                                progress, selection)
    if name == "paper-table" or paper or judge or judge_model:
        return _paper_table(name, graph_name, queries, paper, out, runs, split, human, limit, k, concurrency,
                            progress, judge, judge_model, selection)
    _check_experiment(name, selection)
    settings = _settings(agents, steps, t)
    graph = load_graph(graph_name)
    choice = resolve_choice(selection, graph)
    selected = _open_queries(graph, queries, split, human, limit, False)
    source = _query_source(queries, split, human, limit)
    target = out or Path("reports") / f"{Path(graph_name).name}-{name}-{Path(str(queries).rstrip('/')).stem}"
    if fraction is not None and fraction <= 0:
        fail("--fraction must be above 0")
    try:
        report, done = run_experiment(
            name, graph, choice, selected, source, target, runs, resolve_truncate(choice.spec, truncate),
            fraction=fraction, seed=selection.seed, settings=settings, k=k, concurrency=concurrency,
            progress=progress, console=err_console, command=shlex.join(["ark", "experiment", *sys.argv[2:]])
            if sys.argv[1:2] == ["experiment"] else None)
    except (RunFolderError, MethodError, ValueError) as exc:
        fail(str(exc))
    except ImportError as exc:
        fail(f"a configuration needs an optional dependency: {exc} (the dense relevance needs pip install "
             "'ark-kg[dense]')")
    print_report(report, target)


def _settings(agents: str | None, steps: str | None, t: int | None) -> Any:
    """The budget experiments' settings from --agents, --steps and --t (the defaults where not given)."""
    from ..experiments import Settings

    defaults = Settings()
    return Settings(agents=_ints(agents, "--agents") or defaults.agents,
                    steps=_ints(steps, "--steps") or defaults.steps, t=t or defaults.t)


def _experiment_preset(selection: MethodSelection) -> str:
    """The paper's experiments run under ``--preset paper`` unless told otherwise (``--preset none``)."""
    from ..methods.presets import NO_PRESET, PresetError, check_preset_name

    chosen = selection.preset or "paper"
    try:
        return chosen if chosen == NO_PRESET else check_preset_name(chosen)
    except PresetError as exc:
        fail(f"{exc} (or {NO_PRESET})")


def _table_preset(selection: MethodSelection) -> str | None:
    from ..methods.presets import NO_PRESET

    return None if selection.preset == NO_PRESET else selection.preset


def _check_experiment(name: str, selection: MethodSelection) -> None:
    """Fail before any run on an unknown experiment, another method than ark, or plots that cannot be drawn."""
    from ..experiments import get_experiment
    from ..plots import ChartsUnavailable, pyplot

    try:
        get_experiment(name)
    except ValueError as exc:
        fail(str(exc))
    if selection.method != "ark":
        fail(f"the paper's experiments run the ark method, not {selection.method!r}")
    try:
        pyplot()
    except ChartsUnavailable as exc:
        fail(str(exc))


def _query_source(queries: Path, split: str | None, human: bool, limit: int | None) -> str:
    """The queries' source as run folders record it (file, split, human questions, first N)."""
    return str(queries) + (f"#split={split}" if split else "") + ("#human" if human else "") + (
        f"#first-{limit}" if limit else "")


def _paper_table(name: str, graph_name: str, queries: Path, paper: str | None, out: Path | None, runs: Path,
                 split: str | None, human: bool, limit: int | None, k: int, concurrency: int, progress: bool,
                 judge: bool, judge_model: str | None, selection: MethodSelection) -> None:
    """``ark experiment paper-table GRAPH --paper graphscout``: every row of the paper's table that runs here."""
    if name != "paper-table":
        fail(f"--paper, --judge and --judge-model belong to paper-table, not to {name!r}")
    from ..experiments.graphscout_table import PAPERS, build_report, row_options, run_rows
    from ..methods import MethodContext, MethodError
    from .eval_cmd import _make_judge, _open_queries

    if paper not in PAPERS:
        fail(f"paper-table needs --paper, one of: {', '.join((*PAPERS, 'ark', 'seeder'))} (got {paper!r})")
    if selection.method != "ark" or selection.sets:
        fail("paper-table runs every row's method: leave out --method and --set (--config FILE.toml sets a "
             "method's options in a table named after it, e.g. [text-rag])")
    try:
        options = row_options(_toml_tables(selection.config)) if selection.config else {}
    except MethodError as exc:
        fail(str(exc))
    graph = load_graph(graph_name)
    llm = _table_policy(selection)
    grader = _make_judge(judge_model) if judge else None
    selected = _open_queries(graph, queries, split, human, limit, False)
    source = _query_source(queries, split, human, limit)
    context = MethodContext(llm=llm, seed=selection.seed)
    results = run_rows(graph, context, selected, source, runs, k=k, concurrency=concurrency, progress=progress,
                       console=err_console, judge=grader, options=options, preset=_table_preset(selection))
    command = shlex.join(["ark", "experiment", *sys.argv[2:]]) if sys.argv[1:2] == ["experiment"] else None
    report = build_report(results, graph, source, len(selected), judge, command)
    target = out or Path("reports") / f"{Path(graph_name).name}-paper-table-{paper}-{Path(str(queries)).stem}"
    report.write(target)
    for table in report.tables[:-1]:
        console.print(table.markdown())
    console.print(f"Report (with the paper's full Table 1): {target / 'report.md'}")


def _retrieval_table(graph_name: str, queries: Path, paper: str, number: int, out: Path | None, runs: Path,
                     split: str | None, human: bool, limit: int | None, k: int, concurrency: int, progress: bool,
                     selection: MethodSelection) -> None:
    """``ark experiment paper-table GRAPH --paper ark|seeder --table N``: every row of that retrieval table."""
    from ..experiments.paper_tables import paper_table
    from ..experiments.retrieval_table import build_report, run_table, table_options
    from ..methods import MethodContext, MethodError
    from .eval_cmd import _open_queries

    try:
        table = paper_table(paper, number)
    except ValueError as exc:
        fail(str(exc))
    if selection.method != "ark" or selection.sets:
        fail("paper-table runs every row's method: leave out --method and --set (--config FILE.toml sets a "
             "method's options in a table named after it, e.g. [seeder] model = \"DIR\")")
    try:
        options = table_options(table, _toml_tables(selection.config)) if selection.config else {}
    except MethodError as exc:
        fail(str(exc))
    graph = load_graph(graph_name)
    llm = _table_policy(selection)
    selected = _open_queries(graph, queries, split, human, limit, False)
    source = _query_source(queries, split, human, limit)
    results = run_table(table, graph, MethodContext(llm=llm, seed=selection.seed), selected, source, runs, k=k,
                        concurrency=concurrency, progress=progress, console=err_console, options=options,
                        preset=_table_preset(selection))
    command = shlex.join(["ark", "experiment", *sys.argv[2:]]) if sys.argv[1:2] == ["experiment"] else None
    report = build_report(table, results, graph, source, len(selected), command)
    target = out or Path("reports") / f"{Path(graph_name).name}-paper-table-{paper}-{number}-{Path(str(queries)).stem}"
    report.write(target)
    console.print(report.tables[0].markdown())
    console.print(f"Report (with the paper's full table): {target / 'report.md'}")


def _table_policy(selection: MethodSelection) -> ChatPolicy | None:
    """The chat model the paper-table rows use (None: offline)."""
    if selection.offline:
        return None
    return make_policy(model=selection.model, base_url=selection.base_url, adapter=selection.adapter,
                       temperature=selection.temperature, max_tokens=selection.max_tokens, announce_offline=False)


def _toml_tables(path: Path) -> dict:
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        fail(f"--config {path}: not a readable TOML file ({exc})")


def register(app: typer.Typer) -> None:
    """Add ``experiment`` to the ``ark`` app."""
    app.command("experiment", cls=method_command("ark"))(experiment)
