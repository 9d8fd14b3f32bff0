"""One evaluation run end to end: retrieve into a run folder (resumably), score, summarize, analyse tool use."""

from __future__ import annotations

import asyncio
import importlib
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ..runtime.trajectory_file import TrajectoryRecords
from ..storage.atomic import atomic_write_text
from ..storage.jsonl import read_jsonl, write_json_atomic, write_jsonl_atomic
from ..storage.locks import output_lock
from .run_folder import RunFolder, RunFolderError, prepare_run_folder, record_embedding_usage, record_sandbox_usage
from .runner import QueryExecutor, RunStats, run_retrieval
from .scoring import markdown_table, score_results, summarize

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query
    from ..methods.base import Retriever
    from ..methods.choice import MethodChoice


@dataclass
class EvalOutcome:
    """What :func:`run_eval` produced."""

    folder: RunFolder
    stats: RunStats
    summary: dict[str, Any]
    tool_use: dict[str, Any] | None = None
    tool_use_rows: list[tuple[str, str]] = field(default_factory=list)
    charts: list[Path] = field(default_factory=list)


def run_config(graph: KnowledgeGraph, choice: MethodChoice, queries_source: str, split: str | None, human: bool,
               k: int, truncate: int | None) -> dict[str, Any]:
    """The ``config.json`` of a run: the retrieval settings a resumed run must repeat, scoring settings, and where
    the run came from (library versions, graph fingerprint)."""
    return {
        "graph": str(graph.info.name or graph.path),
        "graph_path": str(graph.path) if graph.path is not None else None,
        "graph_fingerprint": graph.info.fingerprint,
        "graph_version": graph.info.stored_version,
        **choice.config(),
        "queries": queries_source,
        "split": split,
        "human": human,
        "k": k,
        "truncate": truncate,
        "versions": library_versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


def run_eval(
    graph: KnowledgeGraph,
    choice: MethodChoice,
    queries: Sequence[Query],
    run_dir: str | Path,
    queries_source: str = "",
    split: str | None = None,
    human: bool = False,
    k: int = 100,
    truncate: int | None = None,
    concurrency: int = 4,
    charts: bool = False,
    progress: bool = True,
    console: Console | None = None,
    retriever: Retriever | None = None,
    judge: Any = None,
    executor: QueryExecutor | None = None,
    embedding_since: dict[str, Any] | None = None,
    allow_new_version: bool = False,
) -> EvalOutcome:
    """Retrieve for every query into ``run_dir`` (continuing a previous attempt there), then score it.

    ``retriever`` is the method already built from ``choice`` (else it is built here, after the run folder is
    checked, so a refused resume costs no index build). ``judge`` (an :class:`~ark.metrics.judge.AnswerJudge`,
    off by default) also grades the answers of question-answering queries. A run with failed queries is not scored
    (its outcome has an empty summary): a rerun retries them first. One process at a time uses a run folder
    (:class:`~ark.storage.locks.OutputLocked` for a second). ``executor`` runs the queries elsewhere (e.g. a
    :class:`~ark.eval.ray_runs.RayExecutor`, which builds the method on its workers); the run folder is the same.
    The texts and tokens embedded since ``embedding_since`` (a snapshot of
    :data:`~ark.index.embedding_usage.EMBEDDING_USAGE` taken before ``retriever`` was built; default: now) are added
    to ``config.json``'s ``embedding_usage``, and what the method's code sandboxes cost (their workers ended when
    the method closes at the end of the run) to its ``sandbox_usage``. Each query runs on the graph's newest version
    when it starts (an update during the run is picked up between queries; its lines name their version); a run
    resumed after its graph moved on is refused unless ``allow_new_version``.
    """
    from ..index.embedding_usage import EMBEDDING_USAGE
    from ..sandbox.usage import SANDBOX_USAGE

    sandbox_since = SANDBOX_USAGE.snapshot()
    embedding_since = EMBEDDING_USAGE.snapshot() if embedding_since is None else embedding_since
    config = run_config(graph, choice, queries_source, split, human, k, truncate)
    if Path(run_dir).exists() and not Path(run_dir).is_dir():
        raise RunFolderError(f"--run-dir {run_dir} is a file; give a folder path")
    with output_lock(run_dir, "run folder", folder=True):
        folder, _ = prepare_run_folder(run_dir, config, allow_new_version)
        if retriever is None and executor is None:
            retriever = choice.build(graph)
        try:
            stats = run_retrieval(retriever, queries, graph, folder.results, k=k,
                                  trajectories_path=folder.trajectories, concurrency=concurrency, progress=progress,
                                  console=console, lock=False, executor=executor, follow=choice.build,
                                  start_version=folder.read_config().get("graph_version") or 0)
        finally:  # tokens were spent even by a run that failed or was interrupted
            record_embedding_usage(folder.config, embedding_since)
            record_sandbox_usage(folder.config, sandbox_since)
        if stats.failed or stats.stopped:
            return EvalOutcome(folder=folder, stats=stats, summary={})
        return score_folder(folder, queries, graph, stats, candidate_types=choice.context.candidate_types,
                            truncate=truncate, charts=charts, judge=judge)


def score_folder(folder: RunFolder, queries: Sequence[Query], graph: KnowledgeGraph, stats: RunStats,
                 candidate_types: Sequence[str] | None = None, truncate: int | None = None,
                 charts: bool = False, judge: Any = None) -> EvalOutcome:
    """Write ``per_query.jsonl``, ``summary.json``/``.md`` and, for a method with a run analysis and trajectories,
    its analysis (``tool_use.json``, charts) from the run folder's files. With ``judge``, answers are also graded
    by the LLM judge (``judge_accuracy``, labelled as model-graded)."""
    rows = score_results(queries, read_jsonl(folder.results, repair=True), graph,
                         candidate_types=candidate_types, truncate=truncate)
    if judge is not None:
        judge_rows(rows, judge)
    summary = summarize(rows, truncate=truncate, candidate_types=candidate_types)
    if judge is not None and "answers" in summary:
        summary["answers"]["judge_model"] = str(getattr(judge.policy, "name", type(judge.policy).__name__))
        summary["answers"]["judge_label"] = judge.label
    partial = [str(r["id"]) for r in read_jsonl(folder.results) if r.get("partial")]
    if partial:
        summary["partial_queries"] = partial
    config = folder.read_config()
    summary["run"] = {key: config.get(key) for key in ("graph", "method", "queries", "split", "k", "method_options",
                                                       "llm")}
    for usage in ("embedding_usage", "sandbox_usage"):
        if config.get(usage):
            summary["run"][usage] = config[usage]
    write_jsonl_atomic(folder.per_query, rows)
    title = f"{config.get('graph')} · {config.get('method')} · {Path(str(config.get('queries'))).name}"
    markdown = markdown_table(summary, title=title)
    outcome = EvalOutcome(folder=folder, stats=stats, summary=summary)
    analysis = run_analysis(str(config.get("method")))
    if analysis is not None and folder.trajectories.is_file():
        records = TrajectoryRecords(folder.trajectories, repair=True)
        outcome.tool_use = analysis.analyze(records, rows)
        outcome.tool_use_rows = analysis.summary_rows(outcome.tool_use)
        write_json_atomic(folder.tool_use, outcome.tool_use)
        markdown += "\n" + analysis.markdown(outcome.tool_use)
        summary["tool_use"] = {k: v for k, v in outcome.tool_use.items() if k != "by_step"}
        if charts:
            outcome.charts = analysis.write_charts(outcome.tool_use, records, rows, folder.charts, title=title)
    write_json_atomic(folder.summary_json, summary)
    atomic_write_text(folder.summary_md, markdown)
    return outcome


def judge_rows(rows: list[dict[str, Any]], judge: Any) -> None:
    """Add the judge's verdict to the answer metrics of every question-answering row (``judge_accuracy`` 1 or 0;
    left out where the judge's reply could not be read or its request failed)."""
    answered = [row for row in rows if "answer_metrics" in row]
    items = [(row["query"], row.get("predicted_answer"), row["answer_text"], row["answer_type"]) for row in answered]

    async def grade() -> list[Any]:
        try:
            return await judge.ajudge_many(items)
        finally:  # the client's connections belong to this event loop
            await judge.policy.aclose()

    verdicts = asyncio.run(grade()) if items else []
    for row, verdict in zip(answered, verdicts, strict=True):
        if verdict.correct is not None:
            row["answer_metrics"]["judge_accuracy"] = float(verdict.correct)
        elif verdict.error:
            row["judge_error"] = verdict.error


def run_analysis(method: str) -> Any:
    """The analysis module of ``method`` (see :class:`~ark.methods.MethodSpec`), or None (unknown method, or none)."""
    from ..methods import MethodError, get_method_spec

    try:
        spec = get_method_spec(method)
    except MethodError:
        return None
    return importlib.import_module(spec.analysis) if spec.analysis else None


def library_versions() -> dict[str, str]:
    """Versions of Python, ARK and the libraries that shape results (read from package metadata, not imported)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for package in ("ark-kg", "numpy", "scipy", "pyarrow", "pydantic", "openai", "torch", "transformers",
                    "sentence-transformers", "PyStemmer"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            continue
    return found
