"""GraphScout's offline solver next to offline ARK on the HPO quiz (exact answers), one split.

    bash benchmarks/recipes/hpo_quiz.sh OUT            # the quiz: OUT/splits/{train,val,test}.jsonl
    python benchmarks/bench_graphscout_quiz.py OUT [--split test] [--limit N]

The quiz's questions carry their answer node ids; this script adds the exact answer text (the names of those nodes,
a set) to each line (``OUT/splits/<split>-qa.jsonl``), then evaluates ``graphscout`` (the scripted solver: Cypher
written from the question, run in the sandbox) and ``ark`` (its offline policy), both without a model, into
resumable run folders ``OUT/runs/<method>-<split>``, and prints the retrieval metrics of each (for graphscout: the
nodes its tools touched, answer nodes first) with graphscout's answer metrics (exact match, token F1 of the answer
text). Offline scripted policies, not language models.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ark.eval import open_queries, run_eval
from ark.eval.scoring import percent
from ark.loaders import open_graph
from ark.methods import MethodContext
from ark.methods.choice import MethodChoice
from ark.storage.atomic import atomic_write_text

METHODS = {"ark": {}, "graphscout": {}}


def qa_file(graph, quiz: Path, out: Path) -> Path:
    """The quiz file with each line's answer text: the names of its answer nodes (a set)."""
    lines = []
    for line in quiz.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        names = [graph.name(graph.index_of(node_id)) for node_id in row["answer_ids"]]
        lines.append(json.dumps({"id": row["id"], "query": row["query"], "answer_ids": row["answer_ids"],
                                 "template": row.get("template"), "answer": names, "answer_type": "set"},
                                ensure_ascii=False))
    atomic_write_text(out, "\n".join(lines) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("quiz_dir", type=Path, help="the folder hpo_quiz.sh wrote")
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    console = Console(width=130)
    graph = open_graph("hpo")
    source = qa_file(graph, args.quiz_dir / "splits" / f"{args.split}.jsonl",
                     args.quiz_dir / "splits" / f"{args.split}-qa.jsonl")
    queries, _ = open_queries(source, graph, limit=args.limit)
    table = Table(title=f"HPO quiz, {args.split} split ({len(queries)} questions) — offline scripted policies, "
                        "not LLMs")
    for column in ("method", "Hit@1", "Hit@5", "R@20", "MRR", "answer EM", "answer F1", "s / question"):
        table.add_column(column, justify="left" if column == "method" else "right")
    for name, options in METHODS.items():
        choice = MethodChoice.make(name, options, MethodContext(llm=None))
        suffix = "" if args.limit is None else f"-first{args.limit}"
        run_dir = args.quiz_dir / "runs" / f"{name}-{args.split}{suffix}"
        outcome = run_eval(graph, choice, queries, run_dir, queries_source=str(source), progress=True)
        overall, answers = outcome.summary["overall"], outcome.summary.get("answers", {})
        walls = [json.loads(line).get("wall_s") or 0 for line in (run_dir / "results.jsonl").read_text().splitlines()]
        has_answers = any(json.loads(line).get("answer") for line in (run_dir / "results.jsonl").read_text()
                          .splitlines())
        table.add_row(f"{name} (offline)", *(percent(overall[m]) for m in ("hit@1", "hit@5", "recall@20", "mrr")),
                      *((percent(answers["exact_match"]), percent(answers["f1"])) if has_answers else ("-", "-")),
                      f"{sum(walls) / max(len(walls), 1):.2f}")
        console.print(f"[dim]{name}: {run_dir}[/]")
    console.print(table)


if __name__ == "__main__":
    main()
