"""``ark train seeder GRAPH ...``: train SeedER's expansion policy (registered by :mod:`ark.cli.train_cmd`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .common import check_writable, console, err_console, fail, load_graph
from .train_options import (
    ForceOption,
    GraphArgument,
    out_option,
    progress_option,
    seed_option,
    set_option,
    set_torch_threads,
    threads_option,
)

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph


def seeder(
    graph: GraphArgument,
    queries: Path | None = typer.Option(None, "--queries", "-q", help="Training questions (our JSONL: query, "
                                        "answer_ids). Optional on the built-in hpo graph: the HPO quiz's train "
                                        "split is generated (benchmarks/recipes/hpo_quiz.sh's recipe)."),
    val: Path | None = typer.Option(None, "--val", help="Validation questions (model selection by validation "
                                    "recall); never a test split."),
    out: Annotated[Path | None, out_option("Model directory to write (default for a built-in graph: "
                                           "ARK_HOME/models/seeder-GRAPH, which --method seeder uses when no model= "
                                           "is set). An interrupted run resumes from its checkpoints.")] = None,
    preset: str | None = typer.Option(None, "--preset", help="Hyper-parameters: paper (Table 7's column for the "
                                      "graph's STaRK dataset, PRIME's elsewhere, and Appendix D.2's network: "
                                      "architecture=paper), prime, mag, amazon (Table 7, our network) or hpo (ours; "
                                      "the default on hpo, prime elsewhere)."),
    ablation: str | None = typer.Option(None, "--ablation", help="A Table 2b ablation: no-bpr, single-trajectory, "
                                        "no-baseline, greedy-baseline, rerank."),
    set_values: Annotated[list[str] | None, set_option("Override a setting, KEY=VALUE (dotted keys for search "
                                                       "settings, e.g. --set epochs=4 --set search.budget=200).")]
    = None,
    seed: Annotated[int, seed_option("Random seed (parameters, shuffling, sampling).")] = 0,
    embedder: str | None = typer.Option(None, "--embedder", help="Node/query embedder: all-MiniLM-L6-v2 "
                                        "(packaged, the default), a sentence-transformers directory, or "
                                        "openai:MODEL (an OpenAI-compatible /v1/embeddings endpoint)."),
    device: str = typer.Option("cpu", "--device", help="Torch device: cpu, cuda or cuda:N."),
    threads: Annotated[int, threads_option("Torch CPU threads (1 is fastest for these small graphs on shared "
                                           "cores).")] = 1,
    force: ForceOption = False,
    progress: Annotated[bool, progress_option("Progress bars (running reward).")] = True,
) -> None:
    """Train SeedER's expansion policy on a graph and write a model directory for ``--method seeder``."""
    from ..methods.options import parse_set_values
    from ..methods.registry import MethodError
    from ..methods.seeder.config import train_settings
    from ..methods.seeder.store import BUILTIN_TRAINING, MODEL_FILE, default_model_dir

    builtin = graph in BUILTIN_TRAINING
    if queries is None and not builtin:
        fail(f"--queries is required for graph {graph!r} (a one-command model exists for: "
             f"{', '.join(BUILTIN_TRAINING)})")
    if queries is not None and not queries.is_file():
        fail(f"--queries {queries}: no such file")
    if val is not None and not val.is_file():
        fail(f"--val {val}: no such file")
    if out is None:
        if not builtin:
            fail("--out is required: the folder to write the model to")
        out = default_model_dir(graph)
    if (out / MODEL_FILE).is_file() and not force:
        fail(f"{out} already holds a trained SeedER model; pass --force to retrain it or choose another --out")
    check_writable(out / MODEL_FILE, "cannot write --out")
    try:
        overrides = parse_set_values(set_values or [])
        settings = train_settings(preset or ("hpo" if graph == "hpo" else "prime"), ablation,
                                  {**overrides, "seed": seed}, graph=str(graph))
    except (ValueError, MethodError) as exc:
        fail(str(exc))
    set_torch_threads(threads, "training SeedER needs torch: pip install 'ark-kg[seeder]'")
    kg = load_graph(graph)
    if queries is None:
        queries, val = _builtin_quiz(kg, out)
    report = _train(kg, queries, val, out, settings, embedder, device, progress)
    _print_report(report, out)


def _builtin_quiz(kg: KnowledgeGraph, out: Path) -> tuple[Path, Path]:
    """The HPO quiz (recipe ``hpo``, fixed seed) beside the model; its train and validation splits. Kept for the
    graph version it was made from (``quiz/graph.json``): a graph updated since gets a new quiz."""
    import json

    from ..quiz import generate_quiz
    from ..quiz.output import write_splits
    from ..quiz.recipes import recipe
    from ..storage.atomic import atomic_write_text

    splits = out / "quiz"
    made_from = {"fingerprint": kg.info.fingerprint, "graph_version": kg.info.stored_version}
    stamp = splits / "graph.json"
    same = stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")) == made_from
    if not (same and (splits / "train.jsonl").is_file() and (splits / "val.jsonl").is_file()):
        started = time.perf_counter()
        with err_console.status("Generating the HPO quiz (recipe hpo) for training questions ..."):
            result = generate_quiz(kg, recipe("hpo"))
        write_splits(result.questions, splits)
        atomic_write_text(stamp, json.dumps(made_from))
        err_console.print(f"HPO quiz: {len(result.questions):,} questions in {time.perf_counter() - started:.0f} s; "
                          f"training on {splits / 'train.jsonl'}, validating on {splits / 'val.jsonl'} "
                          "(the test split is not used)")
    return splits / "train.jsonl", splits / "val.jsonl"


def _train(kg: KnowledgeGraph, queries: Path, val: Path | None, out: Path, settings: Any, embedder: str | None,
           device: str,
           progress: bool) -> dict[str, Any]:
    from ..index.embedders import EmbeddingError
    from ..methods.seeder.pipeline import QuestionFileError, read_questions, train_seeder
    from ..methods.seeder.store import SeederModelError
    from ..methods.seeder.trainer import SeederTrainingError

    def log(message: str) -> None:
        err_console.print(message, highlight=False, soft_wrap=True)

    try:
        train = read_questions(queries, kg, log)
        validation = read_questions(val, kg, log) if val is not None else None
        return train_seeder(kg, train, out, settings, validation, embedder, device=device, progress=progress,
                            log=log)
    except (QuestionFileError, SeederTrainingError, SeederModelError, EmbeddingError) as exc:
        fail(str(exc), code=1)


def _print_report(report: dict[str, Any], out: Path) -> None:
    validation = report.get("validation") or {}
    metrics = ", ".join(f"{k} {v:.3f}" for k, v in validation.items() if isinstance(v, float))
    console.print(f"Trained on {report['train_questions'] - report['train_skipped_unreachable']:,} of "
                  f"{report['train_questions']:,} questions ({report['train_skipped_unreachable']:,} had no answer "
                  f"inside their subgraph); best epoch {report['best_epoch']}"
                  + (f", validation {metrics}" if metrics else ""))
    console.print(f"Seconds: embeddings {report['seconds_embeddings']:.0f}, "
                  f"subgraphs {report['seconds_subgraphs']:.0f}, training {report['seconds_training']:.0f}.")
    if "parameters" in report:
        from ..methods.seeder.model import PAPER_PARAMETERS

        console.print(f"Network ({report.get('architecture', 'ours')}): {report['parameters']:,} trainable parameters "
                      f"(the paper: {PAPER_PARAMETERS / 1e6:.1f}M on STaRK-PRIME, Section 5)")
    console.print(f"Model: {out} ({report['model_bytes'] / 1e6:.2f} MB); use it with --method seeder --set model={out}")
