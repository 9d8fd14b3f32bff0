"""Running a retrieval method over queries into a resumable results file.

``results.jsonl`` gets one line per query, ``{"id", "ranked": [node ids, best first], "scores": [...],
"wall_s"}``, written whole and fsynced as each query finishes. A rerun reads the complete lines, cuts off a torn
last line, and only runs the queries that are missing, so an interrupted run finishes with exactly one line per
query; question-answering methods add ``"answer": {"text", "type"}``, and an output marked partial (some agents
failed, under ``allow_partial``) adds ``"partial": "why"``. Methods that record trajectories also write
``trajectories.jsonl`` (``{"id", ..., "trajectories": [...]}``, packed as :mod:`ark.runtime.trajectory_file`
describes) *before* the results line; on resume, trajectory lines without a results line are dropped, so the two
files stay in step.

A query whose method raises (a model endpoint that keeps failing, say) gets no line: it is counted in
``RunStats.failed`` and a rerun retries it. After :data:`MAX_CONSECUTIVE_FAILURES` failures in a row with no
success the run stops early (``RunStats.stopped``) rather than wait out every query's retries. One process writes
a results file at a time (:func:`ark.storage.locks.output_lock`): a second is refused, never doubling lines.

Where the queries run is the executor's business (a :class:`QueryExecutor`): :class:`LocalExecutor` runs them in
this process (the default), :class:`ark.eval.ray_runs.RayExecutor` on the workers of a Ray cluster. Either way
this process is the one writer: every outcome comes back through the same ``record`` step, which writes each query
id at most once.

A graph that changes while the run goes on (``ark graph update``): with ``follow`` (how to build the method on a
graph version), each query runs on the newest version when it starts and finishes on it
(:class:`~ark.eval.following.FollowedMethod`); its results line (and trajectories line) adds ``"graph_version"``
when that is not the run's start version, so the lines of a run on one version are as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..methods.base import MethodOutput, Retriever
from ..runtime.interrupts import run_interruptibly
from ..runtime.trajectory_file import pack_record
from ..storage.jsonl import JsonlAppender, read_jsonl, write_jsonl_atomic
from ..storage.locks import output_lock
from .following import FollowedMethod, GraphsByVersion

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query


@dataclass
class RunStats:
    """What one call of :func:`run_retrieval` did."""

    total: int
    already_done: int
    completed: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (query id, error)
    partial: list[str] = field(default_factory=list)  # ids of outputs marked partial
    stopped: str | None = None  # why the run stopped before trying every query
    wall_s: float = 0.0

    @property
    def finished(self) -> bool:
        return self.already_done + self.completed == self.total


MAX_CONSECUTIVE_FAILURES = 10

Outcome = MethodOutput | BaseException
# Write one query's outcome (a method output, or the error its method raised), its wall time and the graph its
# output's node indices belong to (the graph, its version number, or None: the run's graph); False means stop.
RecordOutcome = Callable[["Query", Outcome, float, "KnowledgeGraph | int | None"], bool]


class QueryExecutor(Protocol):
    """Runs queries somewhere and hands each outcome to ``record`` in this process, the run's single writer."""

    def run(self, todo: Sequence[Query], k: int, record: RecordOutcome) -> None:
        """Run every query of ``todo`` (top ``k``), calling ``record`` once per query as each finishes; stop as soon
        as ``record`` returns False. An exception raised by a query's method is its outcome, not raised here."""
        ...


@dataclass
class LocalExecutor:
    """Runs a built method in this process: a concurrent method (one that awaits, e.g. an LLM) with up to
    ``concurrency`` queries in flight, any other one query at a time. With ``graph`` (the method's) and ``follow``
    (how to build the method on another version of it), each query runs on the graph's newest version."""

    method: Retriever
    concurrency: int = 4
    graph: KnowledgeGraph | None = None
    follow: Callable[[KnowledgeGraph], Retriever] | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency!r}")

    def run(self, todo: Sequence[Query], k: int, record: RecordOutcome) -> None:
        followed = FollowedMethod(self.graph, self.method, self.follow)
        if self.method.concurrent:
            run_interruptibly(_run_async(followed, todo, k, self.concurrency, record))
            return
        for query in todo:
            t0 = time.perf_counter()
            output: Outcome
            used: KnowledgeGraph | None = None
            try:
                output, used = followed.retrieve(query.query, k)
            except Exception as error:  # reported per query; the run goes on
                output = error
            if not record(query, output, time.perf_counter() - t0, used):
                break


def done_ids(results_path: Path, trajectories_path: Path | None = None) -> set[str]:
    """Ids with a complete results line (repairing torn lines and dropping repeated ids, which two concurrent
    writers left before outputs were locked), and trajectory lines brought in step with them."""
    results = read_jsonl(results_path, repair=True)
    done: set[str] = set()
    unique = []
    for record in results:
        if str(record["id"]) not in done:
            done.add(str(record["id"]))
            unique.append(record)
    if len(unique) != len(results):
        write_jsonl_atomic(results_path, unique)
    if trajectories_path is not None and trajectories_path.is_file():
        records = read_jsonl(trajectories_path, repair=True)
        kept, seen = [], set()
        for record in records:
            qid = str(record.get("id"))
            if qid in done and qid not in seen:
                seen.add(qid)
                kept.append(record)
        if len(kept) != len(records):
            write_jsonl_atomic(trajectories_path, kept)
    return done


def run_retrieval(
    method: Retriever | None,
    queries: Sequence[Query],
    graph: KnowledgeGraph,
    results_path: str | Path,
    k: int = 100,
    trajectories_path: str | Path | None = None,
    concurrency: int = 4,
    progress: bool = True,
    console: Console | None = None,
    max_consecutive_failures: int | None = MAX_CONSECUTIVE_FAILURES,
    lock: bool = True,
    executor: QueryExecutor | None = None,
    follow: Callable[[KnowledgeGraph], Retriever] | None = None,
    start_version: int | None = None,
) -> RunStats:
    """Run ``method`` on the queries not yet in ``results_path`` and append their results (see module doc).

    A query whose retrieval raises is reported in ``RunStats.failed`` and left out of the file, so a rerun
    retries it; after ``max_consecutive_failures`` failures in a row (None: never) the other queries are not
    tried. ``concurrency`` bounds how many queries a concurrent method (one that awaits, e.g. an LLM) runs at
    once; other methods run one query at a time. Raises :class:`~ark.storage.locks.OutputLocked` when another
    process writes ``results_path`` or ``trajectories_path`` (``lock=False``: the caller holds a lock covering
    both, such as a run folder's). ``executor`` runs the queries elsewhere (e.g. a
    :class:`~ark.eval.ray_runs.RayExecutor`; ``method`` is then None); the default runs ``method`` here, on the
    graph's newest version at each query with ``follow`` (how to build the method on a version). A results line
    on another version than ``start_version`` (default: ``graph``'s; a resumed run's is its config's) names it.
    """
    if executor is None:
        if method is None:
            raise ValueError("run_retrieval needs a method or an executor")
        executor = LocalExecutor(method, concurrency, graph, follow)
    start = graph.info.version if start_version is None else start_version
    with contextlib.ExitStack() as locks:
        if lock:
            locks.enter_context(output_lock(results_path, "results file"))
        if lock and trajectories_path is not None:
            locks.enter_context(output_lock(trajectories_path, "trajectories file"))
        return _run_locked(executor, queries, graph, Path(results_path), k, trajectories_path, progress, console,
                           max_consecutive_failures, start)


def _run_locked(executor: QueryExecutor, queries: Sequence[Query], graph: KnowledgeGraph, results_path: Path,
                k: int, trajectories_path: str | Path | None, progress: bool, console: Console | None,
                max_consecutive_failures: int | None, start_version: int) -> RunStats:
    traj_path = Path(trajectories_path) if trajectories_path is not None else None
    done = done_ids(results_path, traj_path)
    todo = [q for q in queries if q.id not in done]
    stats = RunStats(total=len(queries), already_done=len(queries) - len(todo))
    console = console or Console(stderr=True)
    start = time.perf_counter()
    results = JsonlAppender(results_path)
    trajectories: JsonlAppender | None = None  # opened on the first query that has trajectories
    graphs = GraphsByVersion(graph)
    try:
        with _progress_bar(console, progress) as bar:
            task = bar.add_task("Retrieving", total=len(queries), completed=stats.already_done)

            streak = 0
            recorded: set[str] = set()

            def record(query: Query, output: Outcome, wall_s: float, used: KnowledgeGraph | int | None) -> bool:
                """Write one query's outcome; False when the run should stop (too many failures in a row)."""
                nonlocal trajectories, streak
                if query.id in recorded:  # an executor that retried a query: its first outcome stands
                    return True
                recorded.add(query.id)
                if isinstance(output, BaseException):
                    stats.failed.append((query.id, f"{type(output).__name__}: {output}"))
                    streak += 1
                else:
                    ran_on = graphs(used)
                    moved = {"graph_version": ran_on.info.version} if ran_on.info.version != start_version else {}
                    if traj_path is not None and output.trajectories is not None:
                        trajectories = trajectories or JsonlAppender(traj_path)
                        # The retrieval record (question, config, fused ranking) too, so `ark trajectory show` reads it.
                        trajectories.append(pack_record({"id": query.id, **(output.record_dict() or {}), **moved,
                                                         "trajectories": output.trajectory_dicts()}))
                    results.append({**_result_record(query, output, ran_on, wall_s), **moved})
                    stats.completed += 1
                    if output.partial:
                        stats.partial.append(query.id)
                    streak = 0
                bar.advance(task)
                if max_consecutive_failures is not None and streak >= max_consecutive_failures:
                    stats.stopped = f"stopped after {streak} queries in a row failed"
                    return False
                return True

            executor.run(todo, k, record)
    finally:
        results.close()
        if trajectories is not None:
            trajectories.close()
        stats.wall_s = time.perf_counter() - start
    return stats


async def _run_async(method: FollowedMethod, todo: Sequence[Query], k: int, concurrency: int,
                     record: RecordOutcome) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one(query: Query) -> tuple[Query, Outcome, float, KnowledgeGraph | None]:
        async with gate:
            t0 = time.perf_counter()
            output: Outcome
            used: KnowledgeGraph | None = None
            try:
                output, used = await method.aretrieve(query.query, k)
            except Exception as error:  # reported per query; the run goes on
                output = error
            return query, output, time.perf_counter() - t0, used

    tasks = [asyncio.ensure_future(one(q)) for q in todo]
    try:
        for finished in asyncio.as_completed(tasks):
            if not record(*await finished):  # single writer: lines never interleave
                break
    finally:
        for pending in tasks:  # stopped early or interrupted: nothing may outlive the run
            pending.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await method.aclose()


def _result_record(query: Query, output: MethodOutput, graph: KnowledgeGraph, wall_s: float) -> dict[str, Any]:
    line = {
        "id": query.id,
        "ranked": [graph.node_id(i) for i in output.indices],
        "scores": [round(float(s), 6) for s in output.scores],
        "wall_s": round(wall_s, 4),
    }
    if output.answer is not None:
        line["answer"] = output.answer.to_dict()
    if output.partial:
        line["partial"] = output.partial
    return line


def _progress_bar(console: Console, enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled,
    )
