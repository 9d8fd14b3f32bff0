"""``ark distill export|train|report``: teacher trajectories → SFT dataset → student → teacher-vs-student table.

Thin wrappers over :mod:`ark.methods.ark.distill` and :mod:`ark.training.sft`; the student then answers with
``--model hf:PATH`` wherever ``--model`` is accepted (``ark ask``, ``ark eval``, ``ark retrieve``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from .common import GRAPH_HELP, console, err_console, fail, load_graph
from .method_options import MethodSelection, build_retriever, method_command, method_selection, resolve_choice

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

distill_app = typer.Typer(no_args_is_help=True, help="Distil an agent's tool use into a small local model: export "
                                                     "teacher trajectories, train a student, compare the two.")


def register(app: typer.Typer) -> None:
    app.add_typer(distill_app, name="distill")


# ----------------------------------------------------------------------------- ark distill export
@distill_app.command("export", cls=method_command("ark"))
def export(
    ctx: typer.Context,
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder (the teacher run inside it is resumed).")],
    queries: Annotated[Path | None, typer.Option(
        "--queries", "-q", help="The training questions: our .jsonl file (e.g. a quiz's splits/train.jsonl), a STaRK "
                                "QA folder or stark_qa.csv (with --split).")] = None,
    split: Annotated[str | None, typer.Option(help="STaRK split (default train); STaRK files only.")] = None,
    human: Annotated[bool, typer.Option("--human", help="STaRK: the human-generated questions.")] = False,
    per_question: Annotated[int | None, typer.Option(
        "--per-question", min=1, help="Trajectories per question = the teacher's agents (paper: 3; default: the "
                                      "method's n_agents, 3).")] = None,
    max_questions: Annotated[int | None, typer.Option(
        min=1, help="Use at most N questions, drawn with --seed (the paper caps at 600 or 6,000).")] = None,
    validation_questions: Annotated[int, typer.Option(
        min=0, help="Questions held out (all their trajectories) for the validation loss (paper: 200).")] = 200,
    sources: Annotated[list[Path] | None, typer.Option(
        "--from", help="Reuse recorded runs instead of running the teacher: an eval run folder, an export folder or "
                       "a trajectory JSONL file (repeatable). With --queries, only its questions are kept.")] = None,
    keep_correct: Annotated[str | None, typer.Option(
        metavar="METRIC", help="Opt-in filter, not the paper's label-free recipe: keep only trajectories whose own "
                               "answer scores above 0 on METRIC (e.g. hit@5). Needs --queries.")] = None,
    include_system: Annotated[bool, typer.Option(
        "--include-system/--no-system", help="Keep the system prompt in each sample (the context the loop gives "
                                             "the student); --no-system gives the reference format.")] = True,
    tokenizer: Annotated[str | None, typer.Option(
        help="The student base's tokenizer (folder or cached id): adds token counts and samples over "
             "--max-length to the statistics (needs the train extra).")] = None,
    max_length: Annotated[int, typer.Option(min=16, help="Context length the student trains with "
                                                         "(paper: 16,384).")] = 16384,
    concurrency: Annotated[int, typer.Option(min=1, help="Questions in flight at once.")] = 4,
    skip_invalid: Annotated[bool, typer.Option(help="Continue without malformed queries.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar with ETA.")] = True,
) -> None:
    """Run the teacher on training questions (or reuse recorded runs) and write the SFT dataset to OUT.

    Paper recipe (§4.3): 3 trajectories per question at temperature 0.7, no filtering by correctness, 200
    validation questions. The teacher is any configured chat model (--model/--base-url) or the offline policy.
    OUT gets train.jsonl, validation.jsonl, statistics.json, questions.jsonl, export.json and, when the teacher
    runs here, the run folder teacher/ (rerun the same command to resume an interrupted export).
    """
    selection = method_selection(ctx)
    from ..methods.ark.distill.export import ExportError, export_dataset

    if out.exists() and not out.is_dir():
        fail(f"--out {out} is a file; give a folder")
    if not sources and queries is None:
        fail("give the training questions (--queries) for the teacher to run on, or recorded runs to reuse (--from)")
    graph = load_graph(graph_name)
    selected = None
    if queries is not None:
        selected, split = _training_questions(graph, queries, split, human, skip_invalid, max_questions,
                                              selection.seed)
    settings: dict[str, Any] = {"graph": graph_name, "queries": str(queries) if queries else None, "split": split,
                                "max_questions": max_questions}
    if sources:
        records = _recorded_records(sources, selected, per_question, settings)
    else:
        assert selected is not None
        records = _teacher_records(graph, selection, selected, per_question, settings, out,
                                   _TeacherRun(str(queries), split, human, concurrency, progress))
    loaded_tokenizer = _load_tokenizer(tokenizer) if tokenizer else None
    try:
        statistics = export_dataset(records, out, validation_questions=validation_questions, seed=selection.seed,
                                    include_system=include_system, keep_correct=keep_correct, queries=selected,
                                    tokenizer=loaded_tokenizer, max_length=max_length if tokenizer else None,
                                    settings=settings)
    except ExportError as exc:
        fail(str(exc))
    _print_statistics(statistics, out)


def _training_questions(graph: KnowledgeGraph, queries: Path, split: str | None, human: bool, skip_invalid: bool,
                        max_questions: int | None, seed: int) -> tuple[Any, str | None]:
    """The questions of --queries (at most --max-questions, drawn with the seed) and the split used (STaRK: train
    unless given)."""
    from ..methods.ark.distill.export import ExportError, select_questions
    from .eval_cmd import _open_queries

    stark = queries.is_dir() or queries.suffix == ".csv"
    if stark and split is None:
        split = "train"
        err_console.print("[dim]STaRK questions: using the train split (--split to change).[/]")
    try:
        return select_questions(_open_queries(graph, queries, split, human, None, skip_invalid), max_questions,
                                seed), split
    except ExportError as exc:
        fail(str(exc))


def _recorded_records(sources: list[Path], selected: Any, per_question: int | None, settings: dict[str, Any]
                      ) -> list[Any]:
    """The trajectories of --from (only the selected questions' when --queries is given); notes them in settings."""
    from ..methods.ark.distill.export import ExportError, read_records, records_for

    if per_question is not None:
        err_console.print("[yellow]warning:[/] --per-question applies when the teacher runs here; the recorded "
                          "runs keep their trajectories")
    try:
        records = [record for source in sources for record in read_records(source)]
    except ExportError as exc:
        fail(str(exc))
    if selected is not None:
        records = records_for(records, selected)
    settings["sources"] = [str(source) for source in sources]
    return records


@dataclasses.dataclass(frozen=True)
class _TeacherRun:
    """How the teacher's eval run reads its questions and runs them (options of ``ark distill export``)."""

    queries_source: str
    split: str | None
    human: bool
    concurrency: int
    progress: bool


def _teacher_records(graph: KnowledgeGraph, selection: MethodSelection, selected: Any, per_question: int | None,
                     settings: dict[str, Any], out: Path, run: _TeacherRun) -> list[Any]:
    """Run the teacher (paper temperature unless given) over the selected questions as a resumable eval run in
    OUT/teacher and return its trajectories; notes the teacher in settings."""
    from ..eval import RunFolderError, run_eval
    from ..methods.ark.distill.export import (
        OFFLINE_NOTE,
        PAPER_TEMPERATURE,
        TEACHER_DIR,
        ExportError,
        read_records,
        records_for,
        teacher_choice,
    )

    if selection.temperature is None:
        selection = dataclasses.replace(selection, temperature=PAPER_TEMPERATURE)
    choice = resolve_choice(selection, graph)
    if per_question is not None and any(s.split("=", 1)[0].strip() == "n_agents" for s in selection.sets):
        fail("give the trajectories per question once: --per-question or --set n_agents, not both")
    try:
        choice = teacher_choice(choice, per_question)
    except ExportError as exc:
        fail(str(exc))
    if choice.spec.uses_llm and choice.context.llm is None:
        err_console.print(f"[yellow]{OFFLINE_NOTE}[/]")
    llm_settings = getattr(choice.context.llm, "settings", choice.context.llm)
    settings.update(teacher=choice.config(), temperature=getattr(llm_settings, "temperature", None))
    retriever = build_retriever(choice, graph)
    try:
        # The teacher is an ordinary resumable eval run in OUT/teacher (its scores never enter the dataset).
        outcome = run_eval(graph, choice, selected, out / TEACHER_DIR, queries_source=run.queries_source,
                           split=run.split, human=run.human, concurrency=run.concurrency, progress=run.progress,
                           console=err_console, retriever=retriever)
    except (RunFolderError, ValueError) as exc:
        fail(str(exc))
    stats = outcome.stats
    err_console.print(f"[dim]teacher: {stats.completed} new, {stats.already_done} already done, of {stats.total} "
                      f"questions ({stats.wall_s:.1f} s) -> {outcome.folder.path}[/]")
    if stats.failed:
        fail(f"{len(stats.failed)} question(s) failed (first: {stats.failed[0][0]}: {stats.failed[0][1]}); rerun "
             f"the same command to retry them, then the dataset is written", code=1)
    return records_for(read_records(outcome.folder.path), selected)


def _load_tokenizer(name: str) -> Any:
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:
        fail(f"--tokenizer needs the train extra: pip install 'ark-kg[train]' ({exc})")
    try:
        return AutoTokenizer.from_pretrained(name)
    except (OSError, ValueError) as exc:
        fail(f"cannot load a tokenizer from --tokenizer {name!r}: {exc}")


def _print_statistics(statistics: dict[str, Any], out: Path) -> None:
    with_tokens = "tokens" in statistics.get("train", {})
    columns = ["part", "questions", "samples", "tool calls", "characters"]
    if with_tokens:
        limit = statistics["train"]["tokens"].get("max_length")
        columns += ["tokens", "trained tokens", f"over {limit:,} tokens"]
    table = Table(title=f"Distillation dataset · {out}", title_justify="left")
    for column in columns:
        table.add_column(column, justify="left" if column == "part" else "right")
    for part in ("train", "validation"):
        summary = statistics.get(part)
        if summary is None:
            continue
        cells = [part, str(summary["questions"]), f"{summary['samples']:,}", f"{sum(summary['tool_calls'].values()):,}",
                 f"{sum(summary['characters'].values()):,}"]
        if with_tokens:
            tokens = summary["tokens"]
            cells += [f"{tokens['tokens']:,}", f"{tokens['trained_tokens']:,}", f"{tokens['over_max_length']:,}"]
        table.add_row(*cells)
    console.print(table)
    dropped = sum(statistics.get(p, {}).get("dropped_by_filter", 0) for p in ("train", "validation"))
    console.print("[dim]" + (f"Correctness filter: {dropped} trajectories dropped." if statistics.get("filtered")
                             else "Label-free: every teacher trajectory is a sample.")
                  + ("" if with_tokens else " Token counts need --tokenizer.")
                  + f" Train with: ark distill train {escape(str(out))} --base MODEL --out STUDENT[/]")


# ----------------------------------------------------------------------------- ark distill train
def _student_base(base: str) -> str:
    """--base ready to train (a GGUF file converted, a tool-less template replaced), saying what was done."""
    from ..llm.gguf_import import GGUFImportError
    from ..llm.hf_models import ChatTemplateError
    from ..training.student_base import resolve_student_base

    try:
        resolved = resolve_student_base(base)
    except (GGUFImportError, ChatTemplateError) as exc:
        fail(str(exc))
    except ImportError as exc:
        fail(f"training needs the train extra: pip install 'ark-kg[train]' ({exc})")
    for note in resolved.notes():
        err_console.print(f"[dim]{escape(note)}[/]")
    return resolved.path


@distill_app.command("train")
def train(
    data: Annotated[Path, typer.Argument(
        help="An export folder (train.jsonl, validation.jsonl) or a chat JSONL file.")],
    base: Annotated[str, typer.Option(help="Base model: any Hugging Face causal LM folder or cached id with a "
                                           "tool-calling chat template (e.g. Qwen3-8B), a GGUF file (converted "
                                           "once, as ark model import does) or a chat model folder whose template "
                                           "renders no tools (it trains with ARK's tool template).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder (adapter/ or model/, merged/, "
                                                          "checkpoints/, training records).")],
    validation: Annotated[Path | None, typer.Option(
        help="Validation chat file (default: the export folder's validation.jsonl).")] = None,
    sets: Annotated[list[str] | None, typer.Option(
        "--set", "-s", metavar="KEY=VALUE", help="A training setting, e.g. --set learning_rate=2e-4 --set lora=false "
                                                 "(repeatable; `ark distill train --help` lists them).")] = None,
    config: Annotated[Path | None, typer.Option(
        help="TOML file of training settings (a table named train, or top-level keys); --set overrides it.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the newest checkpoint in OUT/checkpoints.")] = False,
    merge: Annotated[bool, typer.Option(help="LoRA: also write OUT/merged, the base with the adapter merged in "
                                             "(what vLLM or llama.cpp serve).")] = True,
    seed: Annotated[int | None, typer.Option(help="Seed of initialisation, shuffling and dropout (default 0).")]
    = None,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Fine-tune BASE on the dataset with TRL (loss on the assistant's tokens only) and save the student.

    Defaults are the paper's recipe (§4.3, the reference's LoRA): LoRA r 32, alpha 64, dropout 0.1 on the attention
    and MLP projections, AdamW lr 1e-5, one epoch, 16,384-token context, early stopping on the validation loss.
    Settings (--set KEY=VALUE; defaults and meanings in docs/distillation.md; a wrong key lists them with their
    types): lora, lora_r, lora_alpha, lora_dropout, target_modules, learning_rate, epochs, max_length, batch_size,
    gradient_accumulation_steps, lr_scheduler, warmup_ratio, weight_decay, max_grad_norm, early_stopping_patience,
    evaluations, eval_steps, save_steps, save_total_limit, logging_steps, gradient_checkpointing, bf16, device,
    cpu_threads, seed, progress.
    """
    from ..llm.hf_models import ChatTemplateError
    from ..training.datasets import ChatDatasetError
    from ..training.sft import SFTError, export_merged, train_sft

    train_file, validation = _dataset_files(data, validation)
    settings = _sft_settings(sets or [], config, seed, progress)
    if out.exists() and not out.is_dir():
        fail(f"--out {out} is a file; give a folder")
    if (out / "checkpoints").is_dir() and any((out / "checkpoints").iterdir()) and not resume:
        fail(f"{out} already holds checkpoints: pass --resume to continue that run, or choose another --out")
    base = _student_base(base)
    err_console.print(f"[dim]Training {'a LoRA adapter' if settings.lora else 'all weights'} of {base} on "
                      f"{train_file}" + (f" (validation: {validation})" if validation else "") + "[/]")
    try:
        result = train_sft(train_file, base, out, settings, validation_path=validation, resume=resume)
    except (SFTError, ChatDatasetError, ChatTemplateError) as exc:
        fail(str(exc))
    except ImportError as exc:
        fail(f"training needs the train extra: pip install 'ark-kg[train]' ({exc})")
    student = result.weights_dir
    if settings.lora and merge:
        with err_console.status("Merging the adapter into the base ..."):
            try:
                student = str(export_merged(result.weights_dir, out / "merged", base=base))
            except SFTError as exc:
                fail(str(exc))
    table = Table(title=f"Student · {out}", title_justify="left")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for figure, value in (("training samples", f"{result.train_samples:,}"),
                          ("validation samples", f"{result.validation_samples:,}"),
                          (f"samples cut at {settings.max_length:,} tokens", f"{result.truncated_samples:,}"),
                          ("longest sample, tokens", f"{result.max_tokens:,}"), ("updates", f"{result.steps:,}"),
                          ("final training loss", _number(result.train_loss)),
                          ("best validation loss", _number(result.best_validation_loss)),
                          ("wall time, s", f"{result.wall_s:.1f}"),
                          ("resumed from", result.resumed_from or "-")):
        table.add_row(figure, value)
    console.print(table)
    console.print(f"Student: {escape(student)}\nUse it: ark eval GRAPH --method ark --model hf:{escape(student)} "
                  f"--queries TEST.jsonl (or serve it with vLLM and pass --model/--base-url)", highlight=False)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _dataset_files(data: Path, validation: Path | None) -> tuple[Path, Path | None]:
    from ..methods.ark.distill.dataset import TRAIN_FILE, VALIDATION_FILE

    if data.is_dir():
        train_file = data / TRAIN_FILE
        if not train_file.is_file():
            fail(f"{data} holds no {TRAIN_FILE}: give an export folder (ark distill export) or a chat JSONL file")
        if validation is None and (data / VALIDATION_FILE).is_file():
            validation = data / VALIDATION_FILE
        return train_file, validation
    if not data.is_file():
        fail(f"no such dataset: {data}")
    if validation is not None and not validation.is_file():
        fail(f"no such validation file: {validation}")
    return data, validation


def _sft_settings(sets: list[str], config: Path | None, seed: int | None, progress: bool) -> Any:
    from pydantic import ValidationError

    from ..methods import MethodError
    from ..methods.options import describe_options, merge_options, parse_set_values, read_options_file
    from ..training.sft import SFTSettings

    try:
        values = merge_options(read_options_file(config, "train") if config is not None else {},
                               parse_set_values(sets))
    except MethodError as exc:
        fail(str(exc))
    if seed is not None:
        values["seed"] = seed
    values.setdefault("progress", progress)
    try:
        return SFTSettings.model_validate(values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = ".".join(str(p) for p in error["loc"]) or "(settings)"
            problems.append(f"unknown setting {key!r}" if error["type"] == "extra_forbidden"
                            else f"{key}={error.get('input')!r}: {error['msg']}")
        valid = ", ".join(f"{o.key} ({o.type})" for o in describe_options(SFTSettings))
        fail(f"training settings: {'; '.join(problems)}. Valid settings: {valid}")


# ----------------------------------------------------------------------------- ark distill report
@distill_app.command("report")
def report(
    teacher: Annotated[Path, typer.Argument(help="The teacher's scored run folder (or an export folder).")],
    student: Annotated[Path, typer.Argument(help="The student's scored run folder.")],
    markdown: Annotated[Path | None, typer.Option(
        help="Write the table here (default: STUDENT/distill_report.md, with distill_report.json).")] = None,
    labels: Annotated[tuple[str, str], typer.Option(help="Column names of the two runs.")] = ("teacher", "student"),
) -> None:
    """Teacher vs student over the questions both answered: Hit@1, Hit@5, R@20, MRR (and the student's share of
    the teacher's), valid tool calls, tool-call mix, steps, latency, tokens, and how often the student repeats a
    teacher trajectory."""
    from ..eval import RunFolderError
    from ..experiments.distill_report import distill_report, run_folder
    from ..storage.atomic import atomic_write_text
    from ..storage.jsonl import write_json_atomic

    try:
        result = distill_report(teacher, student, labels)
    except RunFolderError as exc:
        fail(str(exc))
    table = Table(title="Teacher vs student", title_justify="left")
    for column in ("figure", labels[0], labels[1], f"{labels[1]} / {labels[0]}"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for row in result.rows():
        table.add_row(*row)
    console.print(table)
    for note in result.notes:
        console.print(f"[dim]note: {escape(note)}[/]")
    target = markdown or run_folder(student).path / "distill_report.md"
    atomic_write_text(target, result.markdown())
    write_json_atomic(target.with_suffix(".json"), result.to_dict())
    err_console.print(f"[dim]Markdown: {target}[/]")
