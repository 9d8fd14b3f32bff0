"""Does the offline policy's confidence mean something? Hit@1 of the answers it gives "high", "medium" and "low".

    python benchmarks/offline_confidence.py                      # the full table (quiz test split, phenopackets-dev,
                                                                 #   the shape sets), running ARK offline
    python benchmarks/offline_confidence.py --runs quiz=RUN_DIR  # read an `ark eval` run folder instead of running
    python benchmarks/offline_confidence.py --sets quiz --sample 100 --seed 0   # the seeded subset CI checks

Sets: ``quiz`` (the HPO quiz's test split, recipe ``hpo``), ``phenopackets`` (``phenopackets-dev.jsonl`` from the
shared data, ``ARK_SHARED`` or ``../shared/data``), ``shapes`` (recipe ``hpo-shapes``) and the committed held-out
shape files (``shapes-17``, ``shapes-18``, ``shapes-19``). Questions with no answer in the graph (the unanswerable
shape) are left out of Hit@1. For each set: how many questions got each level, and the share of them whose first
answer is right. The targets (issue 28): "high" right at least 90% of the time on each set, and given to at least
half of the quiz test split. Offline policy, not a model.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEVELS = ("high", "medium", "low")
SHAPE_FILES = {"shapes-17": "hpo_shapes.jsonl", "shapes-18": "hpo_shapes_seed18.jsonl",
               "shapes-19": "hpo_shapes_seed19.jsonl"}
DEFAULT_SETS = ("quiz", "phenopackets", "shapes", *SHAPE_FILES)


@dataclass
class Calibration:
    """Per confidence level: questions given it and those of them answered right at rank 1."""

    name: str
    given: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LEVELS, 0))
    right: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LEVELS, 0))

    def add(self, level: str | None, hit: bool) -> None:
        level = level if level in LEVELS else "low"
        self.given[level] += 1
        self.right[level] += int(hit)

    @property
    def total(self) -> int:
        return sum(self.given.values())

    def share(self, level: str) -> float:
        return 100.0 * self.given[level] / self.total if self.total else 0.0

    def hit_at_1(self, level: str | None = None) -> float | None:
        given = self.total if level is None else self.given[level]
        right = sum(self.right.values()) if level is None else self.right[level]
        return 100.0 * right / given if given else None


def calibrate(name: str, outcomes: Iterable[tuple[str | None, bool]]) -> Calibration:
    """A set's table row from (confidence, first answer right) pairs."""
    table = Calibration(name)
    for level, hit in outcomes:
        table.add(level, hit)
    return table


def shared_data() -> Path:
    return Path(os.environ.get("ARK_SHARED") or HERE.parent.parent / "shared") / "data"


def load_set(name: str, graph) -> list[dict]:
    """The questions of one set, each with ``id``, ``query`` and ``answer_ids``."""
    from ark.storage.jsonl import read_jsonl

    if name == "quiz":
        from ark.quiz.generate import generate_quiz
        from ark.quiz.recipes import recipe

        return [q for q in generate_quiz(graph, recipe("hpo")).questions if q["split"] == "test"]
    if name == "phenopackets":
        path = shared_data() / "phenopackets-dev.jsonl"
        if not path.is_file():
            raise SystemExit(f"phenopackets: {path} not found; set ARK_SHARED to the folder holding data/")
        return read_jsonl(path)
    if name == "shapes":
        from ark.quiz.shapes import shape_queries

        return shape_queries(graph, "hpo-shapes")
    if name in SHAPE_FILES:
        records = read_jsonl(HERE / "questions" / SHAPE_FILES[name])
        return [{**q, "query": q.get("query") or q["question"]} for q in records]
    raise SystemExit(f"unknown set {name!r}; valid: {', '.join(DEFAULT_SETS)}")


def sample(questions: list[dict], size: int | None, seed: int) -> list[dict]:
    """The answerable questions, or a seeded sample of ``size`` of them."""
    answerable = [q for q in questions if q.get("answer_ids")]
    if size is None or size >= len(answerable):
        return answerable
    return random.Random(seed).sample(answerable, size)


def run_offline(graph, questions: list[dict]) -> list[tuple[str | None, bool]]:
    """ARK with the offline policy (defaults: 3 agents, 20 steps, votes) on each question."""
    from ark.methods.ark.api import ARK

    ark = ARK(graph)
    outcomes = []
    for n, question in enumerate(questions, start=1):
        result = ark.retrieve(question["query"])
        hit = bool(result.ranked) and result.ranked[0].node_id in set(question["answer_ids"])
        outcomes.append((result.confidence, hit))
        if n % 50 == 0:
            print(f"  {n}/{len(questions)}", file=sys.stderr, flush=True)
    return outcomes


def read_run(run_dir: Path, questions: list[dict]) -> list[tuple[str | None, bool]]:
    """(confidence, hit) per question from an ``ark eval`` run folder (results.jsonl, trajectories.jsonl)."""
    from ark.storage.jsonl import read_jsonl

    truth = {str(q["id"]): set(q["answer_ids"]) for q in questions}
    levels = {str(r["id"]): r.get("confidence") for r in read_jsonl(run_dir / "trajectories.jsonl")}
    return [(levels.get(str(r["id"])), bool(r["ranked"]) and r["ranked"][0] in truth[str(r["id"])])
            for r in read_jsonl(run_dir / "results.jsonl") if truth.get(str(r["id"]))]


def table(rows: list[Calibration]) -> str:
    """The Markdown table: per set, each level's share of the questions and its Hit@1."""
    def cell(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    head = ("| set | n | Hit@1 | " + " | ".join(f"{lv} (share) | {lv} Hit@1" for lv in LEVELS) + " |")
    lines = [head, "|---|---:|---:|" + "---:|---:|" * len(LEVELS)]
    for row in rows:
        cells = [f"{row.given[lv]} ({row.share(lv):.1f}%) | {cell(row.hit_at_1(lv))}" for lv in LEVELS]
        lines.append(f"| {row.name} | {row.total} | {cell(row.hit_at_1())} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS), help="comma-separated: " + ", ".join(DEFAULT_SETS))
    parser.add_argument("--runs", action="append", default=[], metavar="SET=RUN_DIR",
                        help="read this set's outcomes from an `ark eval` run folder instead of running ARK")
    parser.add_argument("--sample", type=int, help="a seeded sample of this many questions per set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--graph", default="hpo")
    args = parser.parse_args(argv)
    from ark.loaders import open_graph

    graph = open_graph(args.graph)
    runs = dict(item.split("=", 1) for item in args.runs)
    rows = []
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        questions = sample(load_set(name, graph), args.sample, args.seed)
        print(f"{name}: {len(questions)} questions", file=sys.stderr, flush=True)
        outcomes = read_run(Path(runs[name]), questions) if name in runs else run_offline(graph, questions)
        rows.append(calibrate(name, outcomes))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
