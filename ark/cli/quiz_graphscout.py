"""``ark quiz GRAPH --style graphscout``: GraphScout's quizzer (objective sampling, the random-walk ablation, or an
LLM scout), the distribution table, the leakage guard's report and the optional Cypher check."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rich import box
from rich.markup import escape
from rich.table import Table

from .common import console, err_console, fail, load_graph, make_policy


def graphscout_quiz(graph: str, out: Path, *, n: int | None, seed: int | None, split_dir: Path | None,
                    phrases: Path | None, max_set: int | None, quizzer: str, verify: bool, model: str | None,
                    base_url: str | None, exclude_questions: Path | None = None) -> None:
    from ..methods.graphscout.quiz import GraphScoutQuizConfig, generate_graphscout_quiz
    from ..methods.graphscout.quiz.objective import MAX_SET
    from ..quiz import load_phrasebook
    from ..quiz.output import write_splits
    from ..storage.jsonl import write_jsonl_atomic

    if quizzer not in ("objective", "random-walk", "scout"):
        fail(f"unknown --quizzer {quizzer!r}; valid: objective, random-walk, scout")
    try:
        phrasebook = load_phrasebook(phrases) if phrases else None
        config = GraphScoutQuizConfig(n=1000 if n is None else n, seed=0 if seed is None else seed,
                                      max_set=MAX_SET if max_set is None else max_set,
                                      quizzer="objective" if quizzer == "scout" else quizzer)
    except ValueError as exc:
        fail(str(exc))
    policy = _scout_policy(model, base_url) if quizzer == "scout" else None
    if policy is not None:  # the scout's queries run in the code sandbox: no bubblewrap, one line naming the fix
        from ..sandbox import SandboxUnavailable, isolation_mode

        try:
            isolation_mode("auto")
        except SandboxUnavailable as exc:
            fail(str(exc), code=1)

    kg = load_graph(graph)
    exclusions = _exclusions(kg, exclude_questions)
    if exclusions is not None:
        config.exclude = exclusions.node_ids
    started = time.perf_counter()
    with err_console.status(f"Quizzing ({quizzer}) ...") as status:
        def progress(done: int, total: int) -> None:
            status.update(f"Quizzing ({quizzer}): {done:,} of {total:,} questions")

        if policy is not None:
            result = asyncio.run(_scout(kg, policy, config, progress))
        else:
            result = generate_graphscout_quiz(kg, config, phrasebook, progress=progress)
    if exclusions is not None:
        exclusions.dropped = result.guard.excluded
        console.print(exclusions.summary())
    for note in result.notes:
        err_console.print(f"[yellow]note:[/] {note}")
    if not result.questions:
        fail("no questions could be generated from this graph (see the notes above)", code=1)
    write_jsonl_atomic(out, result.questions)
    if split_dir is not None:
        write_splits(result.questions, split_dir)
    console.print(_table(result.questions))
    top = ", ".join(f"{name} ({count})" for _, name, count in result.guard.top(kg, 3))
    console.print(f"Leakage guard: {result.guard.dropped:,} training questions dropped (their clues touch the "
                  f"{result.guard.test_nodes:,} nodes of the test questions){'; most often ' + top if top else ''}.")
    console.print(f"Wrote {len(result.questions):,} questions to {out} in {time.perf_counter() - started:.1f}s "
                  f"({quizzer} quizzer, seed {config.seed}).")
    if verify:
        _verify(kg, result.questions)


async def _scout(graph, policy, config, progress):
    from ..methods.graphscout.quiz.scout import ScoutConfig, scout_quiz

    try:
        return await scout_quiz(graph, policy, ScoutConfig(n=config.n, seed=config.seed, max_set=config.max_set,
                                                           exclude=config.exclude), progress=progress)
    finally:
        await policy.aclose()


def _exclusions(graph, path: Path | None):
    """The nodes of a benchmark's questions (``--exclude-questions``), or None without the option."""
    if path is None:
        return None
    from ..methods.graphscout.quiz.exclude import benchmark_exclusions, read_benchmark_questions

    try:
        return benchmark_exclusions(graph, read_benchmark_questions(path))
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))


def _scout_policy(model: str | None, base_url: str | None):
    from ..llm import resolve_settings

    if not resolve_settings(model=model, base_url=base_url).configured():  # None: not overridden
        fail("--quizzer scout needs a chat model: pass --model and --base-url, or set ARK_MODEL and OPENAI_BASE_URL "
             "(without one, use --quizzer objective)")
    return make_policy(model=model, base_url=base_url)


def _verify(graph, questions) -> None:
    from ..graphdb import CypherUnavailable, open_cypher
    from ..methods.graphscout.quiz.cypher import verify_records

    started = time.perf_counter()
    try:
        with err_console.status("Recomputing every answer in Cypher ..."):
            engine = open_cypher(graph)
            verdicts = verify_records(questions, engine, graph=graph)
    except CypherUnavailable as exc:
        fail(f"--verify needs the graph database: {exc}")
    bad = [v for v in verdicts if not v.ok]
    for verdict in bad[:10]:
        err_console.print(f"[red]mismatch[/] {escape(f'{verdict.record_id}: {verdict.detail}')}")
    console.print(f"Cypher check: {len(verdicts):,} answers recomputed on the graph database, {len(bad):,} "
                  f"mismatches ({time.perf_counter() - started:.1f}s).")
    if bad:
        raise SystemExit(1)


def _table(questions) -> Table:
    from ..methods.graphscout.quiz.objective import ALL_PATTERNS
    from ..methods.graphscout.quiz.table import distribution

    table = Table(title="Questions by answer type × difficulty × pattern", box=box.SIMPLE_HEAD, padding=(0, 1),
                  caption="h__ ⟨h,_,_⟩, hr* ⟨h,r,*⟩, h*t ⟨h,*,t⟩, hrt ⟨h,r,t⟩, hyb hybrid; hops, set size and clues "
                          "are means")
    short = {"<h,_,_>": "h__", "<h,r,*>": "hr*", "<h,*,t>": "h*t", "<h,r,t>": "hrt", "hybrid": "hyb"}
    columns = ["type", "level", *(short[p] for p in ALL_PATTERNS), "total", "hops", "set", "clues"]
    for column in columns:
        table.add_column(column, justify="left" if column in columns[:2] else "right", no_wrap=True)
    for row in distribution(questions):
        table.add_row(row.answer_type, row.difficulty, *(f"{row.per_pattern[p]:,}" for p in ALL_PATTERNS),
                      f"{row.total:,}", f"{row.mean_hops:.2f}",
                      "" if row.mean_set_size is None else f"{row.mean_set_size:.2f}", f"{row.mean_clues:.2f}",
                      style="bold" if row.answer_type == "all" else None)
    return table
