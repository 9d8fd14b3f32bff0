"""What the code sandbox adds to a GraphScout question: the offline scripted solver with and without
``code_interpreter``, interleaved question by question, on generated HPO questions.

    python benchmarks/bench_sandbox_overhead.py [--questions 20] [--seed 0]

Two methods are built on the same graph: ``graphscout`` (its pool keeps one warm worker for the whole run, reset in
place between questions: :mod:`ark.sandbox.pristine`) and ``graphscout`` with ``code_interpreter=false`` (the
retriever-only ablation). Each question runs on both, the order alternating, timed in wall seconds and in this
process's CPU seconds; the workers' own CPU time (outside this process's accounting) is what a run records as
``sandbox_usage`` (:data:`ark.sandbox.usage.SANDBOX_USAGE`: their process trees read from /proc as they end). The
overhead of a question
is its time with the sandbox minus its time without; the first question (the worker's start) is shown apart. Offline
scripted solver, not a model: with a model the remaining per-question cost is the same, the start overlaps the
model's first turn.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from ark.loaders import open_graph
from ark.methods import build_method
from ark.methods.graphscout.synthetic import TEMPLATES, QuestionMaker
from ark.sandbox.usage import SANDBOX_USAGE

TARGET_S = 0.05


async def timed(method, question: str) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    await method.aretrieve(question, 100)
    return time.perf_counter() - wall, time.process_time() - cpu


async def run(args) -> None:
    graph = open_graph("hpo")
    with_sandbox = build_method("graphscout", graph)
    without = build_method("graphscout", graph, {"code_interpreter": False})
    maker = QuestionMaker(graph, seed=args.seed)
    per_type = max(1, args.questions // len(TEMPLATES))
    questions = [q.question for kind in TEMPLATES for q in maker.questions(kind, per_type)]
    rows = []
    before = SANDBOX_USAGE.snapshot()
    try:
        for i, question in enumerate(questions):
            pair = {}
            for name in (("with", "without") if i % 2 == 0 else ("without", "with")):
                pair[name] = await timed(with_sandbox if name == "with" else without, question)
            rows.append(pair)
    finally:
        pids = {s.worker_pid for s in with_sandbox.solver.pool._all}
        await with_sandbox.aclose()
        await without.aclose()
    usage = SANDBOX_USAGE.since(before)
    left = [pid for pid in pids if pid is not None and os.path.exists(f"/proc/{pid}")]
    wall = [r["with"][0] - r["without"][0] for r in rows]
    cpu = [r["with"][1] - r["without"][1] for r in rows]
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
          f", {len(rows)} HPO questions (offline scripted solver, not a model)")
    print(f"first question: overhead wall {wall[0]:.3f} s, parent CPU {cpu[0]:.3f} s (the worker's start)")
    later_wall, later_cpu = wall[1:], cpu[1:]
    print(f"later questions: overhead wall median {statistics.median(later_wall):.3f} s, p90 "
          f"{sorted(later_wall)[int(0.9 * (len(later_wall) - 1))]:.3f} s; parent CPU median "
          f"{statistics.median(later_cpu):.3f} s (target <= {TARGET_S} s)")
    print(f"question with sandbox: median wall {statistics.median(r['with'][0] for r in rows[1:]):.3f} s, without "
          f"{statistics.median(r['without'][0] for r in rows[1:]):.3f} s")
    print(f"workers started {usage['workers_started']}, reset in place {usage['resets_in_place']}, ended "
          f"{usage['workers_ended']}, killed {usage['workers_killed']}; their CPU {usage['worker_cpu_s']:.3f} s "
          f"({usage['worker_cpu_s'] / len(rows):.3f} s a question), processes left after close: {len(left)}")
    spread = statistics.median(cpu[1:]) + usage["worker_cpu_s"] / len(rows)
    print(f"overhead in CPU with the workers' CPU spread over the questions: {spread:.3f} CPU-s a question")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
