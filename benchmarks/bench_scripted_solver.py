"""The offline GraphScout solver on generated HPO questions, through the full method (``graphscout``).

    python benchmarks/bench_scripted_solver.py [--per-type 50] [--seed 0]

For each answer type (number, set, boolean, entity) it generates questions whose answers are computed by walking
the graph in memory (``ark.methods.graphscout.synthetic``, independent of any Cypher), then runs the registered
method ``graphscout`` with no model: one solver trajectory per question through the shared tool loop (the scripted
solver calls ``node_id_retriever``, then ``code_interpreter`` with the Cypher it wrote, in a sandbox reset between
trajectories, and answers in ``\\answer{...}``). The method's ``MethodOutput.answer`` is scored against the truth
(exact match and token F1 after normalisation by type). Target: >= 90% exact match per type. Offline scripted
solver, not a model.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from ark.loaders import open_graph
from ark.methods import build_method
from ark.methods.graphscout.synthetic import TEMPLATES, QuestionMaker
from ark.metrics import answer_metrics, mean_answer_metrics

TARGET = 0.90


async def solve_all(method, questions):
    """(answer text or None, seconds, stop reason) per question, one trajectory each, in one event loop."""
    out = []
    try:
        for question in questions:
            started = time.perf_counter()
            output = await method.aretrieve(question.question, 100)
            stop = output.trajectories[0].stop_reason if output.trajectories else ""
            out.append((output.answer.text if output.answer else None, time.perf_counter() - started, stop))
    finally:
        await method.aclose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-type", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    console = Console(width=120)
    graph = open_graph("hpo")
    started = time.perf_counter()
    method = build_method("graphscout", graph)
    console.print(f"method built in {time.perf_counter() - started:.1f} s (Cypher database, BM25 name index, writer)")
    maker = QuestionMaker(graph, seed=args.seed)
    table = Table(title=f"graphscout (offline scripted solver, not a model) on generated HPO questions, seed "
                        f"{args.seed}")
    for column in ("answer type", "questions", "exact match", "token F1", "no answer", "median s", "p90 s"):
        table.add_column(column, justify="left" if column == "answer type" else "right")
    verdicts = []
    for answer_type in TEMPLATES:
        questions = maker.questions(answer_type, args.per_type)
        solved = asyncio.run(solve_all(method, questions))
        rows = [answer_metrics(text, q.answer, answer_type) for q, (text, _, _) in zip(questions, solved, strict=True)]
        mean = mean_answer_metrics(rows)
        times = [seconds for _, seconds, _ in solved]
        verdicts.append(mean["exact_match"] >= TARGET)
        table.add_row(answer_type, str(len(questions)), f"{mean['exact_match']:.1%}", f"{mean['f1']:.3f}",
                      str(sum(text is None for text, _, _ in solved)), f"{np.median(times):.2f}",
                      f"{np.percentile(times, 90):.2f}")
    console.print(table)
    console.print(f"target >= {TARGET:.0%} exact match for every type: {'met' if all(verdicts) else 'MISSED'}")


if __name__ == "__main__":
    main()
