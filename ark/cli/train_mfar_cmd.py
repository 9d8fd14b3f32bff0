"""``ark train mfar GRAPH --queries TRAIN``: train mFAR's query-conditioned field weights (registered by
:mod:`ark.cli.train_cmd`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from .common import check_writable, console, err_console, fail, load_graph
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


def mfar(
    graph: GraphArgument,
    queries: Path = typer.Option(..., "--queries", "-q", help="Training questions (our JSONL: id, query, "
                                 "answer_ids), e.g. the HPO quiz's train split (benchmarks/recipes/hpo_quiz.sh)."),
    out: Annotated[Path | None, out_option("Model folder (default: ARK_HOME/models/mfar-GRAPH, which --method mfar "
                                           "uses when no model= is set). An interrupted run resumes from its "
                                           "checkpoints.")] = None,
    set_values: Annotated[list[str] | None, set_option("A training setting, KEY=VALUE: epochs, batch_size, lr, "
                                                "weight_decay, candidates.")] = None,
    seed: Annotated[int, seed_option("Seed of the initialisation and the shuffling.")] = 0,
    threads: ThreadsOption = 1,
    force: ForceOption = False,
    progress: Annotated[bool, progress_option("Progress lines (questions, epochs).")] = True,
) -> None:
    """Train mFAR's field weights on a graph's questions and write a model folder for ``--method mfar``."""
    from pydantic import ValidationError

    from ..methods.mfar.model import MODEL_FILE, MfarModelError, MfarSettings
    from ..methods.model_folder import default_model_dir
    from ..methods.options import parse_set_values
    from ..methods.registry import MethodError

    if not queries.is_file():
        fail(f"--queries {queries}: no such file")
    out = out or default_model_dir("mfar", Path(graph).name)
    if (out / MODEL_FILE).is_file() and not force:
        fail(f"{out} already holds a trained mFAR model; pass --force to retrain it or choose another --out")
    check_writable(out / MODEL_FILE, "cannot write --out")
    try:
        settings = MfarSettings(**{**parse_set_values(set_values or []), "seed": seed})
    except (ValidationError, MethodError) as exc:
        fail(f"invalid mFAR settings: {' '.join(str(exc).split())}")
    set_torch_threads(threads, "training mFAR needs torch: pip install 'ark-kg[dense]'")
    kg = load_graph(graph)
    questions = _questions(queries, kg)
    from ..methods.mfar.training import train_mfar

    started = time.perf_counter()
    try:
        report = train_mfar(kg, questions, out, settings, lambda m: err_console.print(m, highlight=False), progress)
    except MfarModelError as exc:
        fail(str(exc), code=1)
    console.print(f"Trained mFAR on {len(questions):,} questions ({len(report['fields'])} fields × BM25 and dense, "
                  f"{report['parameters']:,} trained parameters) in {time.perf_counter() - started:.0f} s "
                  f"(field indexes {report['seconds_fields']:.0f} s, pools {report['seconds_pools']:.0f} s, "
                  f"training {report['seconds_training']:.0f} s)")
    console.print(f"Model: {out} ({report['model_bytes'] / 1e3:.1f} kB); use it with --method mfar --set model={out}")


def _questions(path: Path, graph: object) -> list[tuple[str, list[int]]]:
    from ..loaders.queries import read_query_jsonl

    try:
        queries = read_query_jsonl(path)
    except ValueError as exc:
        fail(f"--queries {path}: {exc}")
    found = [(q.query, [graph.index_of(a) for a in q.answer_ids if graph.has_node(a)])  # type: ignore[attr-defined]
             for q in queries]
    found = [(q, answers) for q, answers in found if answers]
    if not found:
        fail(f"--queries {path} holds no question with an answer in this graph (one JSON object a line: "
             "{\"id\", \"query\", \"answer_ids\"})")
    return found
