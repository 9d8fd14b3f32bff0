"""``ark quiz``: sample a STaRK-style benchmark with exact answers from a graph's own schema."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.table import Table

from .common import GRAPH_HELP, check_writable, console, err_console, fail, guarded, load_graph, make_policy

EXCLUDE_QUESTIONS = typer.Option(
    None, "--exclude-questions", help="With --style graphscout: a benchmark's question file (JSONL: question/answer, "
    "e.g. GRBench data.json); the nodes its questions name or answer with never become quiz answers, anchors or clues.")


def quiz(
    graph: str = typer.Argument(..., help=GRAPH_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="JSONL file to write (one question a line)."),
    n: int | None = typer.Option(None, "--n", help="Number of questions (default 2000, or the recipe's)."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="Random seed >= 0 (default 0, or the recipe's)."),
    mix: str | None = typer.Option(None, "--mix", help="Template weights, e.g. 'one_hop=0.5,two_hop_text=0.5'."),
    max_answers: int | None = typer.Option(None, "--max-answers", help="Largest answer set kept (default 20)."),
    recipe: str | None = typer.Option(None, "--recipe", help="A shipped configuration: 'hpo' (relational questions), "
                                      "'hpo-names' (name lookup), 'hpo-layperson' (layperson synonyms) or 'hpo-shapes' "
                                      "(families, conjunctions, attribute + finding, findings by definition)."),
    split_dir: Path | None = typer.Option(None, "--split-dir", help="Also write train/val/test.jsonl here."),
    phrases: Path | None = typer.Option(None, "--phrases", help="TOML phrase file for relations and types."),
    paraphrase: bool = typer.Option(False, "--paraphrase", help="Add an LLM paraphrase as 'query_paraphrase'."),
    model: str | None = typer.Option(None, "--model", help="LLM model for --paraphrase."),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint for --paraphrase."),
    style: str = typer.Option("stark", "--style", help="stark (retrieval questions, the default) or graphscout "
                              "(answer types, patterns, difficulties, clue nodes; GraphScout's quizzer)."),
    quizzer: str = typer.Option("objective", "--quizzer", help="With --style graphscout: objective (sampled "
                                "objectives), random-walk (ablation) or scout (an LLM explores; --model)."),
    verify: bool = typer.Option(False, "--verify", help="With --style graphscout: recompute every answer in Cypher "
                                "on the graph database and print the mismatch count."),
    exclude_questions: Path | None = EXCLUDE_QUESTIONS,
) -> None:
    """Generate questions whose answers are computed exactly by graph traversal."""
    if style == "graphscout":
        from .quiz_graphscout import graphscout_quiz

        if recipe or mix or paraphrase:
            fail("--recipe, --mix and --paraphrase belong to --style stark; --style graphscout samples objectives")
        return graphscout_quiz(graph, out, n=n, seed=seed, split_dir=split_dir, phrases=phrases,
                               max_set=max_answers, quizzer=quizzer, verify=verify, model=model, base_url=base_url,
                               exclude_questions=exclude_questions)
    if style != "stark":
        fail(f"unknown --style {style!r}; valid: stark, graphscout")
    if verify or quizzer != "objective" or exclude_questions:
        fail("--verify, --quizzer and --exclude-questions belong to --style graphscout")
    from ..quiz import QuizConfig, generate_quiz, load_phrasebook, parse_mix
    from ..quiz.lookup import LOOKUP_RECIPES
    from ..quiz.output import template_table, write_splits
    from ..quiz.recipes import recipe as get_recipe
    from ..quiz.shapes import SHAPE_RECIPES
    from ..storage.jsonl import write_jsonl_atomic

    if recipe in LOOKUP_RECIPES or recipe in SHAPE_RECIPES:
        _lookup(graph, recipe, out)
        return
    try:
        base = get_recipe(recipe) if recipe else QuizConfig()
        overrides = {"n": n, "seed": seed, "max_answers": max_answers, "mix": parse_mix(mix) if mix else None}
        config = QuizConfig(**{**vars(base), **{k: v for k, v in overrides.items() if v is not None}})
        phrasebook = load_phrasebook(phrases) if phrases else None
    except ValueError as exc:
        fail(str(exc))
    check_writable(out, "cannot write --out")  # before sampling, not after
    if split_dir is not None:
        check_writable(split_dir / "train.jsonl", "cannot write --split-dir")
    client = _paraphrase_client(model, base_url) if paraphrase else None

    kg = load_graph(graph)
    started = time.perf_counter()
    with err_console.status(f"Sampling {config.n:,} questions ..."):
        result = generate_quiz(kg, config, phrasebook)
    for note in result.notes:
        err_console.print(f"[yellow]note:[/] {note}")
    if not result.questions:
        fail("no questions could be generated from this graph (see the notes above)", code=1)
    if client is not None:
        with err_console.status("Paraphrasing ..."):
            import asyncio

            kept = asyncio.run(_paraphrase(client, result.questions))
        err_console.print(f"Paraphrases kept: {kept:,} of {len(result.questions):,} (others left null).")
    write_jsonl_atomic(out, result.questions)
    if split_dir is not None:
        write_splits(result.questions, split_dir)
    console.print(_table(template_table(result.questions)))
    console.print(f"Wrote {len(result.questions):,} questions to {out} in {time.perf_counter() - started:.1f}s "
                  f"({result.attempts:,} candidates tried, seed {config.seed}).")


def _lookup(graph: str, recipe: str, out: Path) -> None:
    """Write one of the search-by-name sets (:mod:`ark.quiz.lookup`) or question-shape sets (:mod:`ark.quiz.shapes`)
    and count its questions per template."""
    from collections import Counter

    from ..quiz.lookup import LOOKUP_RECIPES, generate_lookup
    from ..quiz.shapes import shape_queries
    from ..storage.jsonl import write_jsonl_atomic

    kg = load_graph(graph)
    records = generate_lookup(kg, recipe) if recipe in LOOKUP_RECIPES else shape_queries(kg, recipe)
    if not records:
        fail(f"recipe {recipe!r} found nothing to ask in this graph", code=1)
    write_jsonl_atomic(out, records)
    table = Table(title=f"Recipe {recipe}: questions per template")
    table.add_column("template")
    table.add_column("questions", justify="right")
    for template, count in Counter(r["template"] for r in records).items():
        table.add_row(template, f"{count:,}")
    console.print(table)
    console.print(f"Wrote {len(records):,} questions to {out}.")


def _paraphrase_client(model: str | None, base_url: str | None):
    from ..llm import resolve_settings

    if not resolve_settings(model=model, base_url=base_url).configured():  # None: not overridden
        fail("--paraphrase needs an LLM: pass --model and --base-url, or set ARK_MODEL and OPENAI_BASE_URL")
    return make_policy(model=model, base_url=base_url)


async def _paraphrase(client, records) -> int:
    from ..quiz.paraphrase import paraphrase_all

    try:
        return await paraphrase_all(client, records)
    finally:
        await client.aclose()


def _table(rows) -> Table:
    table = Table(title="Questions per template (answer-set sizes)")
    for column in ("template", "questions", "mean", "median", "max", "train", "val", "test"):
        table.add_column(column, justify="left" if column == "template" else "right")
    for row in rows:
        table.add_row(row.template, f"{row.count:,}", f"{row.mean_answers:.2f}", f"{row.median_answers:g}",
                      str(row.max_answers), *(f"{row.per_split[s]:,}" for s in ("train", "val", "test")),
                      style="bold" if row.template == "all" else None)
    return table


def register(app: typer.Typer) -> None:
    """Add the ``quiz`` command to the ``ark`` app."""
    app.command("quiz")(guarded(quiz))


if __name__ == "__main__":  # ``python -m ark.cli.quiz_cmd GRAPH ...`` works before the command is wired in.
    standalone = typer.Typer(add_completion=False, pretty_exceptions_show_locals=False)
    register(standalone)
    standalone()
