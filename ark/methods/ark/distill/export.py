"""Teacher trajectories → SFT dataset (paper §4.3): which questions, which trajectories, and the files written.

The teacher runs through the evaluation harness (:func:`ark.eval.run_eval`, called by ``ark distill export``) into
``OUT/teacher/``, an ordinary run
folder: the method registry builds it, the runner keeps several questions in flight, shows progress and resumes an
interrupted export, and the folder's config check refuses to mix two teachers. Recorded runs can be reused instead
(an eval run folder, an earlier export, or ``ark ask --trajectories`` files).

``OUT/`` then holds ``train.jsonl`` and ``validation.jsonl`` (chat samples, see :mod:`ark.training.datasets`),
``statistics.json`` (samples, turns, tool calls, characters, tokens when a tokenizer is given),
``questions.jsonl`` (each question and the side it landed on) and ``export.json`` (the settings and sources).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ark.errors import ArkError

from ....runtime.trajectory_file import read_trajectory_file
from ....storage.jsonl import write_json_atomic, write_jsonl_atomic
from .dataset import STATISTICS_FILE, split_by_question, write_distillation_dataset

if TYPE_CHECKING:
    from ....loaders.queries import Query
    from ....runtime.records import Trajectory
    from ...choice import MethodChoice

TEACHER_DIR = "teacher"
QUESTIONS_FILE = "questions.jsonl"
EXPORT_FILE = "export.json"
# The paper's recipe (§4.3): three trajectories per training question, sampled at temperature 0.7.
PAPER_TRAJECTORIES_PER_QUESTION = 3
PAPER_TEMPERATURE = 0.7
PAPER_VALIDATION_QUESTIONS = 200
RecordT = TypeVar("RecordT", bound=Mapping[str, object])  # a retrieval record, as read or as built
OFFLINE_NOTE = ("The offline policy is deterministic: temperature does not apply. Its trajectories of one question "
                "differ only through the agent index, which seeds each agent's choices (the wording of its "
                "neighbourhood queries, how many candidates it verifies).")


class ExportError(ValueError, ArkError):
    """Export input that cannot give a dataset (no records, unknown source, a filter without labels)."""


def select_questions(queries: Sequence[Query], max_questions: int | None, seed: int = 0) -> list[Query]:
    """All ``queries``, or ``max_questions`` of them drawn with ``seed`` and kept in file order (the paper subsamples
    up to 600 or 6,000 training questions per graph)."""
    if max_questions is None or max_questions >= len(queries):
        return list(queries)
    if max_questions < 1:
        raise ExportError(f"max_questions must be at least 1, got {max_questions}")
    chosen = set(random.Random(seed).sample(range(len(queries)), max_questions))
    return [query for position, query in enumerate(queries) if position in chosen]


def teacher_choice(choice: MethodChoice, per_question: int | None) -> MethodChoice:
    """``choice`` with ``n_agents = per_question`` (the trajectories recorded per question); unchanged when
    ``per_question`` is None. A method without agents cannot give several trajectories per question."""
    from ...choice import MethodChoice

    if per_question is None:
        return choice
    options = choice.options.model_dump()
    if "n_agents" not in options:
        raise ExportError(f"method {choice.name!r} has no n_agents option, so trajectories per question cannot be "
                          f"set; leave out the trajectories-per-question setting")
    options["n_agents"] = per_question
    return MethodChoice(choice.name, type(choice.options).model_validate(options), choice.context)


def read_records(source: str | Path) -> list[dict[str, object]]:
    """The retrieval records of an eval run folder (its ``trajectories.jsonl``), an export folder (its teacher run)
    or a trajectory JSONL file (``ark ask --trajectories``, ``ark retrieve``'s ``*.trajectories.jsonl``)."""
    path = Path(source)
    if path.is_dir():
        for candidate in (path / "trajectories.jsonl", path / TEACHER_DIR / "trajectories.jsonl"):
            if candidate.is_file():
                path = candidate
                break
        else:
            raise ExportError(f"{source} holds no trajectories.jsonl (nor {TEACHER_DIR}/trajectories.jsonl): give an "
                              f"eval run folder, an export folder or a trajectory JSONL file")
    elif not path.is_file():
        raise ExportError(f"no such run folder or trajectory file: {source}")
    try:
        records = read_trajectory_file(path, repair=False)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ExportError(f"{path} is not a JSONL trajectory file: {exc}") from None
    bad = next((n for n, r in enumerate(records, 1) if not isinstance(r, dict) or "question" not in r
                or not isinstance(r.get("agents", r.get("trajectories")), list)), None)
    if bad is not None:
        raise ExportError(f"{path}, record {bad} is not a retrieval record with agent trajectories (a results.jsonl "
                          f"line?); give the trajectories file of a run")
    return records


def records_for(records: Sequence[RecordT], queries: Sequence[Query]) -> list[RecordT]:
    """The records whose question is one of ``queries`` (matched by text), in record order."""
    wanted = {query.query for query in queries}
    return [record for record in records if record["question"] in wanted]


def correctness_filter(metric: str, queries: Sequence[Query]) -> Callable[[Mapping[str, object], Trajectory], bool]:
    """An opt-in filter keeping a trajectory when its own answer list scores above 0 on ``metric`` (e.g. ``hit@5``)
    against the question's gold answers. Not the paper's recipe, which is label-free."""
    from ....metrics import METRIC_NAMES, query_metrics

    if metric not in METRIC_NAMES:
        raise ExportError(f"unknown metric {metric!r} for the correctness filter; valid: {', '.join(METRIC_NAMES)}")
    answers = {query.query: list(query.answer_ids) for query in queries}

    def keep(record: Mapping[str, object], trajectory: Trajectory) -> bool:
        gold = answers.get(str(record["question"]))
        if not gold:
            return False
        return query_metrics(list(trajectory.answer_ids), gold)[metric] > 0

    return keep


def export_dataset(records: Sequence[Mapping[str, object]], out_dir: str | Path, *, validation_questions: int = 200,
                   seed: int = 0, include_system: bool = True, keep_correct: str | None = None,
                   queries: Sequence[Query] | None = None, tokenizer: object = None, max_length: int | None = None,
                   settings: Mapping[str, object] | None = None) -> dict[str, object]:
    """Write the dataset files of ``out_dir`` (see the module doc) from teacher ``records``; return the statistics.

    ``validation_questions`` is lowered to leave at least one training question when the records hold fewer
    questions than asked for (the statistics record the number used). ``keep_correct``: a metric name for the opt-in
    correctness filter (needs ``queries`` with answers). ``settings``: what produced the records, saved in
    ``export.json``.
    """
    if not records:
        raise ExportError("no teacher records to export (did the teacher run answer any question?)")
    questions = list(dict.fromkeys(str(record["question"]) for record in records))
    held_out = min(validation_questions, max(0, len(questions) - 1))
    keep = None
    if keep_correct is not None:
        if not queries:
            raise ExportError("the correctness filter needs the questions' answers: give the query file")
        keep = correctness_filter(keep_correct, queries)
    try:
        statistics = write_distillation_dataset(records, out_dir, validation_questions=held_out, seed=seed,
                                                include_system=include_system, tokenizer=tokenizer,
                                                max_length=max_length, keep=keep)
    except ValueError as exc:
        raise ExportError(str(exc)) from None
    statistics["validation_questions"] = held_out
    _, validation = split_by_question(records, held_out, seed)
    validation_set = {str(record["question"]) for record in validation}
    ids = {query.query: query.id for query in queries or []}
    ids.update({str(r["question"]): str(r["id"]) for r in records if "id" in r})
    out = Path(out_dir)
    write_jsonl_atomic(out / QUESTIONS_FILE, [
        {"id": ids.get(question), "question": question,
         "side": "validation" if question in validation_set else "train"} for question in questions])
    write_json_atomic(out / EXPORT_FILE, {
        **dict(settings or {}), "validation_questions": held_out, "seed": seed, "include_system": include_system,
        "keep_correct": keep_correct, "label_free": keep_correct is None, "questions": len(questions),
        "samples": sum(_samples(statistics.get(side)) for side in ("train", "validation")),
        "written": time.strftime("%Y-%m-%dT%H:%M:%S")})
    write_json_atomic(out / STATISTICS_FILE, statistics)
    return statistics


def _samples(summary: object) -> int:
    """The samples a side's statistics count (0 for a side without any)."""
    count = summary.get("samples", 0) if isinstance(summary, dict) else 0
    return count if isinstance(count, int) else 0
