"""GraphScout GRPO, the offline proof on HPO: a tiny Qwen3 warm-started on scripted-solver trajectories, then GRPO
with tool-calling rollouts (sandboxed code + node retriever) on HPO quiz questions, on CPU.

    python benchmarks/bench_graphscout_grpo_tiny.py [--graph hpo] [--out runs/grpo-tiny] [--seed 0]
        [--questions 16] [--steps 50] [--set key=value ...]

1. writes a GraphScout quiz of the graph (``--quiz-n`` questions, the deterministic quizzer) to ``OUT/quiz.jsonl``;
2. runs the scripted solver on the ``--questions`` training questions and builds a tiny Qwen3 from a config whose
   byte-level BPE tokenizer is trained on those trajectories (``OUT/base``; no download);
3. ``train_graphscout`` with the ``tiny-cpu`` preset and ``warm_start=true``: SFT on the scripted trajectories, then
   GRPO (16 questions, 8 trajectories per question, ``--steps`` steps);
4. prints the per-step mean training reward and failed-tool-call rate and compares the first and last steps.

Every figure is a tiny-model pipeline check (a model built from a config and trained for minutes), not a model
result. Target: the whole run within 30 minutes on two CPU cores.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ark.loaders import open_graph
from ark.methods.graphscout.options import GraphScoutOptions
from ark.methods.graphscout.quiz import GraphScoutQuizConfig, generate_graphscout_quiz
from ark.methods.graphscout.training.data import training_questions, warm_start_samples
from ark.methods.graphscout.training.environment import ScoutWorld
from ark.methods.graphscout.training.settings import TINY_CPU_PRESET, GRPOSettings
from ark.methods.graphscout.training.trainer import train_graphscout
from ark.methods.options import parse_set_values
from ark.storage.jsonl import write_jsonl_atomic
from ark.training.tiny_model import TinyModelSpec, build_tiny_model

TARGET_S = 30 * 60
# The proof's model: hidden 64, 2 layers, a 4,096-token BPE whose merges may span words (short sequences).
TINY_SPEC = TinyModelSpec(hidden_size=64, head_dim=16, vocab_size=4096, tokenizer_cross_words=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="hpo")
    parser.add_argument("--out", type=Path, default=Path("runs/grpo-tiny"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiz-n", type=int, default=200)
    parser.add_argument("--questions", type=int, default=16)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--set", dest="sets", action="append", default=[])
    args = parser.parse_args()
    started = time.perf_counter()
    graph = open_graph(args.graph)

    quiz = args.out / "quiz.jsonl"
    result = generate_graphscout_quiz(graph, GraphScoutQuizConfig(n=args.quiz_n, seed=args.seed))
    write_jsonl_atomic(quiz, result.questions)
    print(f"quiz: {len(result.questions)} questions → {quiz} ({time.perf_counter() - started:.0f}s)")

    overrides = {**TINY_CPU_PRESET, "max_questions": args.questions, "steps": args.steps, "seed": args.seed,
                 **parse_set_values(args.sets)}
    settings = GRPOSettings(**overrides)
    options = GraphScoutOptions(system_prompt=settings.system_prompt, max_turns=settings.max_turns)
    world = ScoutWorld(graph, options)
    try:
        questions = training_questions(quiz, graph, split=settings.split, limit=settings.max_questions,
                                       seed=settings.seed)
        samples = warm_start_samples(world, questions)
    finally:
        world.close()
    base = build_tiny_model(args.out / "base", samples=samples, spec=TINY_SPEC, seed=args.seed)
    print(f"tiny base: {base} (tokenizer trained on {len(samples)} scripted trajectories; "
          f"{time.perf_counter() - started:.0f}s)")

    run = train_graphscout(graph, quiz, base, args.out / "run", settings, options, engine=world.engine,
                           index=world.index)
    curve = [json.loads(line) for line in (Path(run.out_dir) / "progress.jsonl").read_text().splitlines()]
    print("\n[tiny-model pipeline check] per-step training rollouts (T = 1.0):")
    print("| step | mean reward | answered | clue fraction | failed-call rate | tool calls / rollout |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in curve:
        print(f"| {r['step']} | {r['reward']:.3f} | {r['answered']:.2f} | {r['clue_fraction']:.2f} | "
              f"{r['failed_call_rate']:.2f} | {r['tool_calls']:.2f} |")
    def mean(rows, key):
        return sum(r[key] or 0.0 for r in rows) / len(rows)

    total = time.perf_counter() - started
    print()
    for k in sorted({max(1, min(3, len(curve) // 3)), max(1, len(curve) // 5)}):
        first, last = curve[:k], curve[-k:]
        print(f"first {k} → last {k} steps: mean reward {mean(first, 'reward'):.3f} → {mean(last, 'reward'):.3f}; "
              f"answered {mean(first, 'answered'):.2f} → {mean(last, 'answered'):.2f}; failed-tool-call rate "
              f"{mean(first, 'failed_call_rate'):.3f} → {mean(last, 'failed_call_rate'):.3f}; tool calls per rollout "
              f"{mean(first, 'tool_calls'):.2f} → {mean(last, 'tool_calls'):.2f}")
    print(f"{run.questions} questions × {settings.group_size} trajectories, {run.steps} GRPO steps; whole run "
          f"{total / 60:.1f} min (target ≤ {TARGET_S / 60:.0f} min: {'met' if total <= TARGET_S else 'MISSED'})")


if __name__ == "__main__":
    main()
