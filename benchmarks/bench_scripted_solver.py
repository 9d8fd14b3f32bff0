"""The scripted (no-LLM) GraphScout solver on generated HPO questions, end to end through the code sandbox.

    python benchmarks/bench_scripted_solver.py [--per-type 50] [--seed 0]

For each answer type (number, set, boolean, entity) it generates questions whose answers are computed by walking
the graph in memory (``ark.methods.graphscout.synthetic``), lets the scripted solver write Cypher, runs that code
in a fresh sandbox per question (one trajectory each), reads the printed rows and scores the answer (exact match
and token F1 after normalisation by type). Target: >= 90% exact match per type. Offline policy, not a model.
"""

from __future__ import annotations

import argparse
import ast
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from ark.graphdb.export import ladybug_database
from ark.graphdb.ladybug_engine import LadybugEngine
from ark.loaders import open_graph
from ark.methods.graphscout.cypher_writer import CypherWriter, answer_from_rows
from ark.methods.graphscout.synthetic import TEMPLATES, QuestionMaker
from ark.metrics import answer_metrics, mean_answer_metrics
from ark.sandbox import CodeSandbox, SandboxLimits

TARGET = 0.90


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-type", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    console = Console(width=110)
    graph = open_graph("hpo")
    built = ladybug_database(graph)
    engine = LadybugEngine(built.path, built.schema)
    writer = CypherWriter(graph, built.schema)
    maker = QuestionMaker(graph, seed=args.seed)
    table = Table(title=f"Scripted GraphScout solver on generated HPO questions (seed {args.seed}; offline policy)")
    for column in ("answer type", "questions", "exact match", "token F1", "no plan", "median s / question"):
        table.add_column(column, justify="left" if column == "answer type" else "right")
    verdicts = []
    for answer_type in TEMPLATES:
        questions = maker.questions(answer_type, args.per_type)
        rows, times, unplanned = [], [], 0
        for question in questions:
            started = time.perf_counter()
            plan = writer.plan(question.question)
            answer = None
            if plan is None:
                unplanned += 1
            else:
                with CodeSandbox(engine, SandboxLimits(timeout_s=20)) as sandbox:
                    result = sandbox.run(plan.python_code())
                if result.ok:
                    answer, _ = answer_from_rows(plan, ast.literal_eval(result.stdout.strip()))
            times.append(time.perf_counter() - started)
            rows.append(answer_metrics(answer, question.answer, answer_type))
        mean = mean_answer_metrics(rows)
        verdicts.append(mean["exact_match"] >= TARGET)
        table.add_row(answer_type, str(len(questions)), f"{mean['exact_match']:.1%}", f"{mean['f1']:.3f}",
                      str(unplanned), f"{np.median(times):.2f}")
    console.print(table)
    console.print(f"target >= {TARGET:.0%} exact match for every type: {'met' if all(verdicts) else 'MISSED'}")
    engine.close()


if __name__ == "__main__":
    main()
