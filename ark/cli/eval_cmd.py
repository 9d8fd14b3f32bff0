"""``ark retrieve``, ``ark eval`` and ``ark eval compare``: retrieval runs over query files, scored STaRK-style."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from ..text import clean_inline
from .common import GRAPH_HELP, check_writable, console, err_console, fail, guarded, load_graph, one_line
from .method_options import (
    MethodGroup,
    build_retriever,
    method_command,
    method_selection,
    resolve_choice,
)

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph


class _EvalGroup(MethodGroup):
    """``ark eval GRAPH ...`` runs an evaluation; ``ark eval compare RUN...`` is a subcommand.

    Click would read ``compare`` as the GRAPH argument, so a first word naming a subcommand skips the group's
    own parameters (all optional) and goes straight to that subcommand. Options may follow GRAPH.

    Through public hooks only: :meth:`parse_args` parses the group's parameters from no words (their defaults) and
    keeps the subcommand's words in ``ctx.meta``; :meth:`invoke` runs the group's callback (which returns at once,
    a subcommand being invoked) and then that subcommand on its words, as a group invokes one.
    """

    allow_interspersed_args = True

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer's Context base (typer._click) is private
        if args and args[0] in self.commands:
            ctx.meta[_SUBCOMMAND_WORDS] = list(args)
            return super().parse_args(ctx, [])  # no words left over: no subcommand for the group itself
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> object:
        words = ctx.meta.pop(_SUBCOMMAND_WORDS, None)
        if words is None:
            return super().invoke(ctx)
        with ctx:
            name, command, rest = self.resolve_command(ctx, words)
            assert command is not None  # parse_args found the name among the group's commands
            ctx.invoked_subcommand = name
            super(TyperGroup, self).invoke(ctx)  # the group's own callback, as a command runs one
            sub_ctx = command.make_context(name, rest, parent=ctx)
            with sub_ctx:
                return sub_ctx.command.invoke(sub_ctx)


_SUBCOMMAND_WORDS = "ark.eval.subcommand"  # ctx.meta: the words of `ark eval SUBCOMMAND ...`, from parse to invoke

eval_app = typer.Typer(cls=_EvalGroup, invoke_without_command=True, no_args_is_help=False,
                       help="Evaluate a retrieval method on a query file (STaRK metrics); `eval compare` compares.")


def register(app: typer.Typer) -> None:
    """Add ``retrieve`` and the ``eval`` group (with ``eval compare``) to the ``ark`` app."""
    app.command("retrieve", cls=method_command())(guarded(retrieve))
    app.add_typer(eval_app, name="eval")


# ----------------------------------------------------------------------------- shared options
GraphArg = Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)]
QueriesOpt = Annotated[Path, typer.Option(
    "--queries", "-q", help="Our .jsonl query file, a STaRK QA folder (with stark_qa/), or a STaRK stark_qa.csv.")]
SplitOpt = Annotated[str | None, typer.Option(help="STaRK split (train, val, test, ...); STaRK files only.")]
HumanOpt = Annotated[bool, typer.Option("--human", help="STaRK: the human-generated questions.")]
LimitOpt = Annotated[int | None, typer.Option(min=1, help="Only the first N queries.")]
KOpt = Annotated[int, typer.Option("--k", min=1, help="Nodes to retrieve per query (methods that rank a top k).")]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="Queries in flight at once (methods that call a model).")]
SkipInvalidOpt = Annotated[bool, typer.Option(
    help="Continue without malformed queries; unknown answer ids are dropped when scoring.")]
ProgressOpt = Annotated[bool, typer.Option(help="Show a progress bar with ETA.")]
# A value is required (typer has no options with an optional value): `--ray local` starts a Ray instance.
RayOpt = Annotated[str | None, typer.Option(
    "--ray", metavar="ADDRESS",
    help="Spread the queries over Ray workers (the ray extra): 'local' starts a Ray instance on this machine for the "
         "run; auto, HOST:PORT or ray://HOST:PORT joins a running cluster. Results are still written here.")]
AllowNewVersionOpt = Annotated[bool, typer.Option(
    "--allow-new-version", help="Resume a run whose graph has a newer version since it started (ark graph update); "
                                "the new lines record the version they ran on.")]
RayWorkersOpt = Annotated[int | None, typer.Option(
    min=1, help="With --ray: how many workers (default one per CPU of the cluster); --concurrency is per worker.")]


def _open_queries(graph, queries: Path, split: str | None, human: bool, limit: int | None, skip_invalid: bool):
    from ..eval import QueryFileError, open_queries

    try:
        selected, check = open_queries(queries, graph, split=split, human=human, skip_invalid=skip_invalid,
                                       limit=limit)
    except (QueryFileError, ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    if not check.ok:
        err_console.print(f"[yellow]Query file problems (continuing, --skip-invalid):[/]\n{escape(check.describe())}")
    if not selected:
        fail(f"{queries}: no queries to run")
    return selected


def _report_stats(stats, where: Path) -> None:
    """The run's counts on one line; a run with failed queries ends here with one error line and exit code 1."""
    if stats.failed or stats.stopped:
        qid, error = stats.failed[0]
        stopped = f"; {stats.stopped}, {stats.total - stats.already_done - stats.completed - len(stats.failed)} " \
                  "not tried" if stats.stopped else ""
        fail(f"{len(stats.failed)} of {stats.total - stats.already_done} queries failed and were not written "
             f"({stats.completed} written, {stats.already_done} already done{stopped}); rerun the same command to "
             f"retry them. First, {qid}: {one_line(error)}", code=1)
    err_console.print(f"[dim]{stats.completed} new, {stats.already_done} already done, of {stats.total} queries "
                      f"({stats.wall_s:.1f} s) -> {where}[/]", soft_wrap=True)
    if stats.partial:
        err_console.print(f"[yellow]warning:[/] {len(stats.partial)} query(ies) are partial (--allow-partial: some "
                          f"agents failed and the others were fused), first: {stats.partial[0]}", soft_wrap=True)


def _ray_executor(address: str | None, workers: int | None, choice, graph_name: str, graph, concurrency: int):
    """The executor of ``--ray`` (None without it): workers open the graph the driver opened."""
    if address is None:
        if workers is not None:
            fail("--ray-workers needs --ray")
        return None
    from ..eval.ray_runs import RayExecutor, import_ray

    try:
        import_ray()
        return RayExecutor(choice, graph=graph_name, path=str(graph.path) if graph.path else None,
                           fingerprint=graph.info.fingerprint, address=address, workers=workers,
                           concurrency=concurrency, status=lambda text: err_console.print(f"[dim]{text}[/]",
                                                                                            soft_wrap=True))
    except Exception as exc:  # the ray extra missing, a bad value: one line
        fail(str(exc))


def _trajectories_beside(out: Path) -> Path:
    return out.with_name(out.name.removesuffix(".jsonl") + ".trajectories.jsonl")


# ----------------------------------------------------------------------------- ark retrieve
def retrieve(
    ctx: typer.Context,
    graph_name: GraphArg,
    queries: QueriesOpt,
    out: Annotated[Path, typer.Option("--out", "-o", help="Results JSONL (resumed if it exists).")],
    split: SplitOpt = None,
    human: HumanOpt = False,
    limit: LimitOpt = None,
    k: KOpt = 100,
    concurrency: ConcurrencyOpt = 4,
    trajectories: Annotated[Path | None, typer.Option(
        help="Trajectories JSONL of methods that record them (default: beside --out, *.trajectories.jsonl).")]
    = None,
    skip_invalid: SkipInvalidOpt = False,
    progress: ProgressOpt = True,
    ray: RayOpt = None,
    ray_workers: RayWorkersOpt = None,
    allow_new_version: AllowNewVersionOpt = False,
) -> None:
    """Run METHOD over a query file and write one line per query: {"id", "ranked", "scores"} (resumable).

    The settings are kept beside --out (``<name>.config.json``); resuming with other retrieval settings is refused.
    """
    selection = method_selection(ctx)
    from ..eval import RunFolderError, prepare_results_file, run_retrieval
    from ..eval.experiment import run_config
    from ..eval.ray_runs import RayRunError
    from ..eval.run_folder import record_embedding_usage, record_sandbox_usage, results_config_path
    from ..index.embedding_usage import EMBEDDING_USAGE
    from ..sandbox.usage import SANDBOX_USAGE
    from ..storage.locks import OutputLocked, output_lock

    if out.is_dir():
        fail(f"--out {out} is a directory; give a results file path such as {out / 'results.jsonl'}")
    trajectories = trajectories or _trajectories_beside(out)
    check_writable(out, "cannot write --out")  # before the graph and indexes are loaded, not after
    check_writable(trajectories, "cannot write --trajectories")
    try:
        with output_lock(out, "results file"):
            graph = load_graph(graph_name)
            choice = resolve_choice(selection, graph)
            executor = _ray_executor(ray, ray_workers, choice, graph_name, graph, concurrency)  # before any write
            selected = _open_queries(graph, queries, split, human, limit, skip_invalid)
            try:
                prepare_results_file(out, run_config(graph, choice, str(queries), split, human, k, None),
                                     allow_new_version)
            except RunFolderError as exc:
                fail(str(exc))
            start = json.loads(results_config_path(out).read_text(encoding="utf-8")).get("graph_version") or 0
            embedded_before, sandboxes_before = EMBEDDING_USAGE.snapshot(), SANDBOX_USAGE.snapshot()
            retriever = build_retriever(choice, graph)  # with --ray too: indexes are built once, here
            try:
                stats = run_retrieval(retriever, selected, graph, out, k=k, trajectories_path=trajectories,
                                      concurrency=concurrency, progress=progress, console=err_console,
                                      executor=executor, follow=choice.build, start_version=start)
            except (ValueError, RayRunError) as exc:
                fail(str(exc))
            finally:
                record_embedding_usage(results_config_path(out), embedded_before)
                record_sandbox_usage(results_config_path(out), sandboxes_before)
    except OutputLocked as exc:
        fail(str(exc), code=1)
    _report_stats(stats, out)


# ----------------------------------------------------------------------------- ark eval
@eval_app.callback()
@guarded
def evaluate(
    ctx: typer.Context,
    graph_name: Annotated[str | None, typer.Argument(
        metavar="GRAPH", help=GRAPH_HELP)] = None,
    queries: Annotated[Path | None, typer.Option(
        "--queries", "-q", help="Our .jsonl query file, a STaRK QA folder (with stark_qa/), or a STaRK stark_qa.csv.")
    ] = None,
    run_dir: Annotated[Path | None, typer.Option(
        help="Run folder (default runs/<graph>-<method>-<queries>-<name or time>); an existing one is resumed.")]
    = None,
    name: Annotated[str | None, typer.Option(help="Name the default run folder (rerun with it to resume).")] = None,
    truncate: Annotated[int | None, typer.Option(
        min=0, help="Cut rankings to the top N before all metrics. Default: the method's own (20 for ark, as the "
                    "ARK paper; none for the others); 0: score the whole ranking.")] = None,
    charts: Annotated[bool, typer.Option(help="Methods with a run analysis (ark): also write PNG charts.")]
    = False,
    judge: Annotated[bool, typer.Option(
        "--judge", help="Also grade answers of question-answering queries with an LLM judge (off by default; "
                        "model-graded, labelled as such; the model from --judge-model or the [llm] settings).")]
    = False,
    judge_model: Annotated[str | None, typer.Option(help="The judge's chat model (with --judge).")] = None,
    split: SplitOpt = None,
    human: HumanOpt = False,
    limit: LimitOpt = None,
    k: KOpt = 100,
    concurrency: ConcurrencyOpt = 4,
    skip_invalid: SkipInvalidOpt = False,
    progress: ProgressOpt = True,
    ray: RayOpt = None,
    ray_workers: RayWorkersOpt = None,
    allow_new_version: AllowNewVersionOpt = False,
) -> None:
    """Run METHOD over a query file into a run folder and print Hit@1, Hit@5, Recall@20 and MRR (STaRK semantics);
    where queries carry an answer text, also exact match and token F1 of the method's answers.

    Per-template rows appear when the file has templates. Queries with no valid answer count as 0. Ranked nodes
    not returned by the method are not retrieved (no tied filler as in STaRK).
    """
    selection = method_selection(ctx)
    if ctx.invoked_subcommand is not None:
        return
    missing = [flag for flag, value in (("GRAPH", graph_name), ("--method", selection.method),
                                        ("--queries", queries)) if value is None]
    if missing:
        console.print(ctx.get_help())
        fail(f"missing {', '.join(missing)}")
    from ..eval import RunFolderError, default_run_dir, run_eval
    from ..eval.ray_runs import RayRunError
    from ..methods.registry import resolve_truncate
    from ..plots import ChartsUnavailable
    from ..storage.locks import OutputLocked

    assert graph_name is not None and queries is not None
    if run_dir is not None and run_dir.exists() and not run_dir.is_dir():
        fail(f"--run-dir {run_dir} is a file; give a folder path")
    target = run_dir or default_run_dir(graph_name, str(selection.method), queries, name=name)
    check_writable(target / "config.json", "cannot write the run folder")  # before any slow loading
    graph = load_graph(graph_name)
    choice = resolve_choice(selection, graph)
    truncate = resolve_truncate(choice.spec, truncate)
    selected = _open_queries(graph, queries, split, human, limit, skip_invalid)
    grader = _make_judge(judge_model) if judge else None
    executor = _ray_executor(ray, ray_workers, choice, graph_name, graph, concurrency)
    retriever, embedded_before = _built(choice, graph)  # indexes are built before the progress bar starts (and Ray)
    try:
        outcome = run_eval(graph, choice, selected, target, queries_source=str(queries), split=split, human=human, k=k,
                           truncate=truncate, concurrency=concurrency, charts=charts, progress=progress, judge=grader,
                           console=err_console, retriever=retriever, executor=executor, embedding_since=embedded_before,
                           allow_new_version=allow_new_version)
    except OutputLocked as exc:
        fail(str(exc), code=1)
    except (RunFolderError, ValueError, RayRunError) as exc:
        fail(str(exc))
    except ChartsUnavailable as exc:
        fail(f"{exc} (the run itself is saved in {target}; rerun without --charts or after installing)")
    _print_outcome(outcome, f"{graph_name} · {choice.name} · {queries.name}", charts)


def _print_outcome(outcome: Any, title: str, charts: bool) -> None:
    """A finished evaluation: its counts, the metrics table, tool use, the charts written and the run folder."""
    _report_stats(outcome.stats, outcome.folder.results)
    _print_summary(outcome.summary, title)
    if outcome.tool_use_rows:
        _print_tool_use(outcome.tool_use_rows)
    if charts and not outcome.charts:
        err_console.print("[dim]No trajectories with a run analysis in this run: no charts.[/]")
    for path in outcome.charts:
        err_console.print(f"[dim]chart: {path}[/]")
    console.print(f"[dim]Run folder: {outcome.folder.path}[/]")


def _built(choice: Any, graph: KnowledgeGraph) -> tuple[Any, dict[str, Any]]:
    """The method built, and the embedding counts from before (so that the run counts the index builds' tokens)."""
    from ..index.embedding_usage import EMBEDDING_USAGE

    before = EMBEDDING_USAGE.snapshot()
    return build_retriever(choice, graph), before


def _make_judge(model: str | None):
    """The LLM judge of ``--judge`` (temperature 0), or exit saying how to configure its model."""
    from ..llm import resolve_settings
    from ..metrics.judge import make_judge

    settings = resolve_settings(model=model or None)
    if not settings.configured():
        fail("--judge needs a chat model: --judge-model, ARK_MODEL/OPENAI_BASE_URL, or [llm] in config.toml")
    return make_judge(**({"model": model} if model else {}))


def _print_summary(summary: dict[str, Any], title: str) -> None:
    from ..eval.scoring import (
        METRIC_LABELS,
        answer_cells,
        answer_columns,
        retrieval_cells,
        scoring_note,
        summary_rows,
    )
    from ..metrics import HEADLINE_METRICS

    answers = answer_columns(summary)
    table = Table(title=title, title_justify="left")
    table.add_column("scope")
    table.add_column("n", justify="right")
    for metric in HEADLINE_METRICS:
        table.add_column(METRIC_LABELS[metric], justify="right")
    if answers:
        table.add_column("n answered", justify="right")
        for metric in answers:
            table.add_column(f"answer {METRIC_LABELS[metric]}", justify="right")
    for scope, values in summary_rows(summary):
        cells = [scope, str(values["n"]), *retrieval_cells(values, HEADLINE_METRICS)]
        if answers:
            cells += [str((values.get("answers") or {}).get("n", 0)), *answer_cells(values, answers)]
        table.add_row(*map(Text, cells))  # template names come from the question file: never markup
    console.print(table)
    console.print(f"[dim]{scoring_note(summary)}[/]")


def _print_tool_use(rows: list[tuple[str, str]]) -> None:
    table = Table(title="Tool use", title_justify="left")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for figure, value in rows:
        table.add_row(figure, value)
    console.print(table)


# ----------------------------------------------------------------------------- ark eval compare
@eval_app.command("compare")
@guarded
def compare(
    runs: Annotated[list[Path], typer.Argument(metavar="RUN...", help="Scored run folders (at least two).")],
    metric: Annotated[str, typer.Option(help="Metric deciding right/wrong per query (hit@1, hit@5, ...).")]
    = "hit@1",
    examples: Annotated[int, typer.Option(min=0, help="Queries listed per direction.")] = 10,
    markdown: Annotated[Path | None, typer.Option(help="Also write the comparison as Markdown here.")] = None,
) -> None:
    """Compare runs side by side (overall and per template) and list queries one gets right and another wrong."""
    from ..eval import RunFolderError, comparison_markdown, comparison_rows, disagreements, load_run
    from ..eval.scoring import METRIC_LABELS
    from ..metrics import HEADLINE_METRICS, METRIC_NAMES
    from ..storage.atomic import atomic_write_text

    if len(runs) < 2:
        fail("give at least two run folders to compare")
    if metric not in METRIC_NAMES:
        fail(f"unknown metric {metric!r}; valid: {', '.join(METRIC_NAMES)}")
    try:
        loaded = [load_run(path) for path in runs]
    except RunFolderError as exc:
        fail(str(exc))
    labels = [run.label for run in loaded]
    if len(set(labels)) < len(labels):
        for i, run in enumerate(loaded):
            run.label = f"{i + 1}:{run.label}"
    table = Table(title="Runs compared", title_justify="left")
    for column in ("scope", "run", "n", *(METRIC_LABELS[m] for m in HEADLINE_METRICS)):
        table.add_column(column, justify="left" if column in ("scope", "run") else "right")
    previous_scope = None
    for row in comparison_rows(loaded):
        if previous_scope is not None and row[0] != previous_scope:
            table.add_section()
        table.add_row(*map(Text, (row[0] if row[0] != previous_scope else "", *row[1:])))
        previous_scope = row[0]
    console.print(table)
    base = loaded[0]
    for other in loaded[1:]:
        a_only, b_only = disagreements(base, other, metric)
        for winner, loser, rows in ((base, other, a_only), (other, base, b_only)):
            console.print(f"\n[bold]{len(rows)}[/] queries [green]{escape(winner.label)}[/] gets right and "
                          f"[red]{escape(loser.label)}[/] wrong ({METRIC_LABELS[metric]}):")
            for r in rows[:examples]:  # ids and questions are data (a data set's, a model's): text, never markup
                console.print(escape(f"  {r['id']}: {clean_inline(r.get('query', ''), 90)}"), highlight=False)
            if len(rows) > examples:
                console.print(f"  … and {len(rows) - examples} more")
    if markdown is not None:
        check_writable(markdown, "cannot write --markdown")
        atomic_write_text(markdown, comparison_markdown(loaded, metric=metric, examples=examples))
        err_console.print(f"[dim]Markdown: {markdown}[/]")
