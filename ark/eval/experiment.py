"""One evaluation run end to end: retrieve into a run folder (resumably), score, summarize, analyse tool use."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ..runtime.atomic import atomic_write_text
from ..runtime.jsonl import read_jsonl, write_json_atomic, write_jsonl_atomic
from .methods import AGENT_METHODS, MethodOptions, make_method
from .run_folder import RunFolder, prepare_run_folder
from .runner import RunStats, run_retrieval
from .scoring import markdown_table, score_results, summarize
from .tooluse import analyze_tool_use, tool_use_markdown

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query


@dataclass
class EvalOutcome:
    """What :func:`run_eval` produced."""

    folder: RunFolder
    stats: RunStats
    summary: dict[str, Any]
    tool_use: dict[str, Any] | None = None
    charts: list[Path] = field(default_factory=list)


def run_config(graph: KnowledgeGraph, method: str, queries_source: str, split: str | None, human: bool, k: int,
               options: MethodOptions, truncate: int | None) -> dict[str, Any]:
    """The ``config.json`` of a run: the retrieval settings a resumed run must repeat, plus scoring settings."""
    method_options: dict[str, Any] = {}
    if method in AGENT_METHODS:
        policy = options.policy
        method_options = {"n_agents": options.n_agents, "max_steps": options.max_steps, "fusion": options.fusion,
                          "policy": "offline" if policy is None else getattr(policy, "name", type(policy).__name__)}
    return {
        "graph": str(graph.metadata.get("name") or graph.path),
        "graph_path": str(graph.path) if graph.path is not None else None,
        "graph_fingerprint": graph.metadata.get("fingerprint"),
        "method": method,
        "queries": queries_source,
        "split": split,
        "human": human,
        "k": k,
        "candidate_types": list(options.candidate_types) if options.candidate_types else None,
        "method_options": method_options,
        "truncate": truncate,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


def run_eval(
    graph: KnowledgeGraph,
    method: str,
    queries: Sequence[Query],
    run_dir: str | Path,
    queries_source: str = "",
    split: str | None = None,
    human: bool = False,
    k: int = 100,
    options: MethodOptions | None = None,
    truncate: int | None = None,
    concurrency: int = 4,
    charts: bool = False,
    progress: bool = True,
    console: Console | None = None,
    retriever: Any = None,
) -> EvalOutcome:
    """Retrieve for every query into ``run_dir`` (continuing a previous attempt there), then score it.

    ``retriever`` is a method object already made by :func:`make_method` for ``method`` (else one is made here).
    """
    options = options or MethodOptions()
    config = run_config(graph, method, queries_source, split, human, k, options, truncate)
    folder, _ = prepare_run_folder(run_dir, config)
    retriever = retriever if retriever is not None else make_method(method, graph, options)
    is_agent = method in AGENT_METHODS
    stats = run_retrieval(retriever, queries, graph, folder.results, k=k,
                          trajectories_path=folder.trajectories if is_agent else None,
                          concurrency=concurrency, progress=progress, console=console)
    return score_folder(folder, queries, graph, stats, candidate_types=options.candidate_types,
                        truncate=truncate, charts=charts)


def score_folder(folder: RunFolder, queries: Sequence[Query], graph: KnowledgeGraph, stats: RunStats,
                 candidate_types: Sequence[str] | None = None, truncate: int | None = None,
                 charts: bool = False) -> EvalOutcome:
    """Write ``per_query.jsonl``, ``summary.json``/``.md`` (and tool use for agent runs) from the results file."""
    rows = score_results(queries, read_jsonl(folder.results, repair=True), graph,
                         candidate_types=candidate_types, truncate=truncate)
    summary = summarize(rows, truncate=truncate, candidate_types=candidate_types)
    config = folder.read_config()
    summary["run"] = {key: config.get(key) for key in ("graph", "method", "queries", "split", "k", "method_options")}
    write_jsonl_atomic(folder.per_query, rows)
    title = f"{config.get('graph')} · {config.get('method')} · {Path(str(config.get('queries'))).name}"
    markdown = markdown_table(summary, title=title)
    outcome = EvalOutcome(folder=folder, stats=stats, summary=summary)
    if folder.trajectories.is_file():
        records = read_jsonl(folder.trajectories, repair=True)
        outcome.tool_use = analyze_tool_use(records, rows)
        write_json_atomic(folder.tool_use, outcome.tool_use)
        markdown += "\n" + tool_use_markdown(outcome.tool_use)
        summary["tool_use"] = {k: v for k, v in outcome.tool_use.items() if k != "by_step"}
        if charts:
            from .charts import write_tool_use_charts

            outcome.charts = write_tool_use_charts(outcome.tool_use, records, rows, folder.charts, title=title)
    write_json_atomic(folder.summary_json, summary)
    atomic_write_text(folder.summary_md, markdown)
    return outcome
