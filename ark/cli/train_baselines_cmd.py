"""``ark train avatar`` and ``ark train mor``: the trained baselines of ARK's Table 1 (registered by
:mod:`ark.cli.train_cmd`). Both write a model folder checked against the graph that ``--method avatar|mor`` read
(default ``ARK_HOME/models/METHOD-GRAPH``); on the built-in hpo graph, with no ``--queries``, both train on the HPO
quiz's train split (recipe ``hpo``) and select on its validation split."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .common import check_writable, console, err_console, fail, load_graph, make_policy
from .train_options import (
    ForceOption,
    GraphArgument,
    ThreadsOption,
    out_option,
    progress_option,
    seed_option,
    set_option,
    set_torch_threads,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..graph import KnowledgeGraph

BUILTIN_QUIZ = ("hpo",)
QueriesOption = Annotated[Path | None, typer.Option("--queries", "-q", help="Training questions (JSONL: query, "
                                                    "answer_ids); optional on hpo (the HPO quiz's train split).")]


def _log(message: str) -> None:
    err_console.print(message, highlight=False, soft_wrap=True)


def _splits(graph: str, kg: KnowledgeGraph, queries: Path | None, val: Path | None, out: Path) -> tuple[Path,
            Path | None]:
    """The training and validation files: the given ones, or the HPO quiz's splits written beside the model."""
    if queries is not None:
        return queries, val
    from ..quiz import generate_quiz
    from ..quiz.output import write_splits
    from ..quiz.recipes import recipe

    splits = out / "quiz"
    if not (splits / "train.jsonl").is_file() or not (splits / "val.jsonl").is_file():
        with err_console.status("Generating the HPO quiz (recipe hpo) for training questions ..."):
            result = generate_quiz(kg, recipe("hpo"))
        write_splits(result.questions, splits)
        _log(f"HPO quiz: {len(result.questions):,} questions; training on {splits / 'train.jsonl'}, selecting on "
             f"{splits / 'val.jsonl'} (the test split is not used)")
    return splits / "train.jsonl", splits / "val.jsonl"


def _check_inputs(graph: str, queries: Path | None, val: Path | None, out: Path | None, method: str) -> Path:
    from ..methods.model_folder import default_model_dir

    if queries is None and graph not in BUILTIN_QUIZ:
        fail(f"--queries is required for graph {graph!r} (a one-command model exists for: {', '.join(BUILTIN_QUIZ)})")
    for flag, path in (("--queries", queries), ("--val", val)):
        if path is not None and not path.is_file():
            fail(f"{flag} {path}: no such file")
    if out is None:
        if graph not in BUILTIN_QUIZ:
            fail("--out is required: the folder to write the model to")
        out = default_model_dir(method, graph)
    check_writable(out / "probe", "cannot write --out")
    return out


def _settings(model: type[BaseModel], sets: list[str], seed: int) -> Any:
    from pydantic import ValidationError

    from ..methods.options import parse_set_values
    from ..methods.registry import MethodError

    try:
        values = {**parse_set_values(sets), "seed": seed}
        return model(**values)
    except MethodError as exc:
        fail(str(exc))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        fail(f"bad --set: {problems}. Valid keys: {', '.join(model.model_fields)}")


def avatar(
    graph: GraphArgument,
    queries: QueriesOption = None,
    val: Path | None = typer.Option(None, "--val", help="Evaluation questions scoring each instruction set "
                                    "(default: a seeded sample of the training questions)."),
    out: Annotated[Path | None, out_option("Model folder (default ARK_HOME/models/avatar-GRAPH); an interrupted run "
                                           "resumes from its state there.")] = None,
    model: str | None = typer.Option(None, "--model", "-m", help="Chat model of the actor and the comparator."),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint."),
    sets: Annotated[list[str] | None, set_option("A setting, KEY=VALUE: rounds, batch_size, threshold, "
                                                 "max_positives, max_negatives, eval_questions, patience, "
                                                 "max_steps, call_chars.")] = None,
    seed: Annotated[int, seed_option("Seed of the batches and the evaluation sample.")] = 0,
) -> None:
    """AvaTaR: optimise the actor's instructions with a comparator over positive and negative training questions."""
    from ..methods.avatar.training import (
        AvatarSettings,
        AvatarTrainingError,
        evaluation_sample,
        optimise,
        read_questions,
    )
    from ..methods.base import MethodContext
    from ..methods.registry import MethodError, needs_model_message

    settings = _settings(AvatarSettings, sets or [], seed)
    out = _check_inputs(graph, queries, val, out, "avatar")
    llm = make_policy(model=model, base_url=base_url, announce_offline=False)
    if llm is None:
        fail(needs_model_message("avatar").replace("method 'avatar'", "ark train avatar"))
    kg = load_graph(graph)
    train_path, val_path = _splits(graph, kg, queries, val, out)
    try:
        train = read_questions(train_path, kg)
        evaluation = evaluation_sample(read_questions(val_path, kg) if val_path else train, settings)
        _log(f"AvaTaR on {graph}: {len(train):,} training questions, {len(evaluation)} evaluation questions, at "
             f"most {settings.rounds} rounds of {settings.batch_size} → {out}")
        body = asyncio.run(optimise(kg, llm, train, evaluation, out, settings, MethodContext(seed=seed),
                                    getattr(getattr(llm, "settings", None), "model", None) or model or "", _log))
    except (AvatarTrainingError, MethodError) as exc:
        fail(str(exc), code=1)
    console.print(f"Stopped after {body['rounds']} rounds ({body['stop']}); instructions of round "
                  f"{body['chosen_round']}, evaluation MRR {body['evaluation']['mrr']:.3f}.")
    console.print(f"Use them: ark ask {graph} \"...\" --method avatar --model {model or 'M'} --set model={out}")


def mor(
    graph: GraphArgument,
    queries: QueriesOption = None,
    val: Path | None = typer.Option(None, "--val", help="Validation questions choosing the epoch (default on hpo: "
                                    "the quiz's validation split); never a test split."),
    out: Annotated[Path | None, out_option("Model folder (default ARK_HOME/models/mor-GRAPH); an interrupted run "
                                           "resumes from its checkpoint there.")] = None,
    sets: Annotated[list[str] | None, set_option("A setting, KEY=VALUE: epochs, batch_size, learning_rate, "
                                                 "negatives, width, buckets, pool, text_k, anchors, "
                                                 "max_frontier.")] = None,
    seed: Annotated[int, seed_option("Seed of initialisation and negative sampling.")] = 0,
    threads: ThreadsOption = 1,
    force: ForceOption = False,
    progress: Annotated[bool, progress_option("Progress bars.")] = True,
) -> None:
    """MoR: plan and traverse the training questions offline, then train the structure-aware reranker (CPU)."""
    set_torch_threads(threads, "ark train mor needs torch: pip install 'ark-kg[mor]'")
    from ..methods.mor.spec import MoRSettings
    from ..methods.mor.training import MODEL_FILE, MoRTrainingError, train_mor

    settings = _settings(MoRSettings, sets or [], seed)
    out = _check_inputs(graph, queries, val, out, "mor")
    if (out / MODEL_FILE).is_file() and not force:
        fail(f"{out} already holds a trained MoR model; pass --force to retrain it or choose another --out")
    kg = load_graph(graph)
    train_path, val_path = _splits(graph, kg, queries, val, out)
    try:
        train, validation = _query_rows(train_path), _query_rows(val_path) if val_path else []
        with _progress_bar(progress) as report:
            body = train_mor(kg, train, validation, out, settings, _log, report)
    except (MoRTrainingError, ValueError) as exc:
        fail(str(exc), code=1)
    console.print(f"Trained on {body['trained_on']:,} of {body['train_questions']:,} questions (the rest had no "
                  f"answer among their candidates); best epoch {body['best_epoch']} of {body['epochs']}, validation "
                  f"MRR {body['val_mrr']:.3f}; {body['parameters']:,} parameters; {body['seconds_total']:.0f} s "
                  f"({body['seconds_planning']:.0f} s planning).")
    console.print(f"Model: {out}; use it with --method mor --set model={out}")


def _query_rows(path: Path) -> list[Any]:
    from ..loaders.queries import read_query_jsonl

    rows = read_query_jsonl(path)
    if not rows:
        fail(f"{path} holds no questions", code=1)
    return rows


def _progress_bar(show: bool) -> Any:
    """A context giving ``report(label, done, total)``: a rich progress bar on a terminal, else nothing."""
    import contextlib

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    @contextlib.contextmanager
    def bar() -> Any:
        if not show:
            yield lambda label, done, total: None
            return
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err_console, transient=True) as bars:
            tasks: dict[str, Any] = {}

            def report(label: str, done: int, total: int) -> None:
                key = label.split(" ")[0] if label.startswith("planning") else "epochs"
                if key not in tasks:
                    tasks[key] = bars.add_task(label, total=total)
                bars.update(tasks[key], completed=done, description=label)

            yield report

    return bar()
