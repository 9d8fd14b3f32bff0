"""Graphs of other domains (issue 46): offline ARK against plain BM25 and BM25 over the neighbourhood documents.

    python -m benchmarks.other_domains                               # every graph, 20 questions a kind, seed 0
    python -m benchmarks.other_domains --graphs pypackages --per-kind 5   # one graph, quickly
    python -m benchmarks.other_domains --write-questions benchmarks/questions/domains   # the question files only
    python -m benchmarks.other_domains --questions benchmarks/questions/domains          # score the files there

Each graph (``benchmarks.domains.GRAPHS``) is built from its data package into the tables a user would have,
written under ``--cache`` and imported with ``ark graph import jsonl`` (a new process, ARK's own importer); its
questions (six kinds, exact answers from the tables: ``benchmarks/domains/questions.py``) are generated with
``--seed``. Methods: ``ark`` (the offline policy, no model: default options), ``bm25`` and ``bm25-rel`` (the
registry's baselines). Prints per graph and kind: n and Hit@1 per method; per graph: the share of ARK's answers
given "high" confidence and how many of those are right at rank 1. ``--json`` writes every number and each
question's outcome. Offline policy figures, not a model's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.domains import GRAPHS
from benchmarks.domains.questions import KINDS, generate
from benchmarks.domains.tables import import_folder, write_folder

METHODS = ("ark", "bm25", "bm25-rel")
DEFAULT_CACHE = Path.home() / ".cache" / "ark-other-domains"


def prepare(name: str, cache: Path, per_kind: int, seed: int, limit: int | None) -> tuple[Path, list[dict]]:
    """Build graph ``name``'s tables, import them with ``ark graph import`` and generate its questions."""
    data = GRAPHS[name](limit)
    folder = write_folder(data, cache / "tables" / name)
    started = time.perf_counter()
    printed = import_folder(folder, cache / "graphs" / name, cache / "home")
    print(f"{name}: {len(data.nodes)} nodes, {len(data.edges)} edges, imported in "
          f"{time.perf_counter() - started:.1f} s\n  " + "\n  ".join(printed.strip().splitlines()), file=sys.stderr)
    questions = [q.to_dict() for q in generate(data, per_kind=per_kind, seed=seed)]
    return cache / "graphs" / name, questions


def run_method(method: str, graph: Any, questions: list[dict]) -> list[dict]:
    """Each question's top-5 ids and, for ARK, its confidence."""
    outcomes = []
    if method == "ark":
        from ark.methods.ark.api import ARK

        ark = ARK(graph)
        for question in questions:
            result = ark.retrieve(question["question"])
            outcomes.append({"top": [n.node_id for n in result.ranked[:5]], "confidence": result.confidence})
        return outcomes
    from ark.methods.registry import build_method

    retriever = build_method(method, graph)
    for question in questions:
        output = retriever.retrieve(question["question"], 5)
        outcomes.append({"top": [graph.node_id(i) for i in output.indices[:5]], "confidence": None})
    return outcomes


def score(name: str, questions: list[dict], outcomes: dict[str, list[dict]]) -> dict[str, Any]:
    """Hit@1 per kind and method, and ARK's "high"-confidence precision, for one graph."""
    hits: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    high_given = high_right = 0
    for n, question in enumerate(questions):
        right = set(question["answer_ids"])
        for method, results in outcomes.items():
            hit = bool(results[n]["top"]) and results[n]["top"][0] in right
            hits[question["kind"]][method].append(hit)
            hits["all"][method].append(hit)
            if method == "ark" and results[n]["confidence"] == "high":
                high_given += 1
                high_right += int(hit)
    kinds = {kind: {"n": len(next(iter(by.values()))), **{m: sum(v) / len(v) for m, v in by.items()}}
             for kind, by in hits.items()}
    return {"graph": name, "kinds": kinds, "high_given": high_given, "high_right": high_right,
            "high_precision": high_right / high_given if high_given else None}


def table(rows: list[dict[str, Any]], methods: tuple[str, ...]) -> str:
    """The Markdown table: graph, kind, n, Hit@1 per method; a graph's "all" row also has "high" right/given."""
    lines = ["| graph | kind | n | " + " | ".join(f"{m} Hit@1" for m in methods) + " | ark \"high\" right |",
             "|---|---|---:|" + "---:|" * len(methods) + "---:|"]
    for row in rows:
        for kind in (*KINDS, "all"):
            if kind not in row["kinds"]:
                continue
            cells = row["kinds"][kind]
            high = ""
            if kind == "all" and "ark" in methods:
                share = f"{row['high_precision']:.2f}" if row["high_precision"] is not None else "–"
                high = f"{share} ({row['high_right']}/{row['high_given']})"
            lines.append(f"| {row['graph']} | {kind} | {cells['n']} | "
                         + " | ".join(f"{cells[m]:.2f}" for m in methods) + f" | {high} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", default=",".join(GRAPHS), help="comma-separated: " + ", ".join(GRAPHS))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--per-kind", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, help="at most this many source records per graph (a quick run)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--write-questions", type=Path, help="write each graph's questions there and stop")
    parser.add_argument("--questions", type=Path, help="score the question files in this folder (GRAPH.jsonl)")
    parser.add_argument("--json", type=Path, help="write the figures and each question's outcome here")
    args = parser.parse_args(argv)
    from ark.loaders import open_graph
    from ark.storage.jsonl import read_jsonl, write_jsonl_atomic

    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    rows, details = [], []
    for name in [g.strip() for g in args.graphs.split(",") if g.strip()]:
        if name not in GRAPHS:
            raise SystemExit(f"unknown graph {name!r}; valid: {', '.join(GRAPHS)}")
        path, questions = prepare(name, args.cache, args.per_kind, args.seed, args.limit)
        if args.write_questions:
            write_jsonl_atomic(args.write_questions / f"{name}.jsonl", questions)
            print(f"wrote {len(questions)} questions to {args.write_questions / f'{name}.jsonl'}")
            continue
        if args.questions:
            questions = list(read_jsonl(args.questions / f"{name}.jsonl"))
        graph = open_graph(path)
        outcomes = {}
        for method in methods:
            started = time.perf_counter()
            outcomes[method] = run_method(method, graph, questions)
            print(f"  {name} {method}: {len(questions)} questions in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr, flush=True)
        rows.append(score(name, questions, outcomes))
        details += [{**q, **{m: outcomes[m][n] for m in methods}} for n, q in enumerate(questions)]
    if rows:
        print(table(rows, methods))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "questions": details}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
