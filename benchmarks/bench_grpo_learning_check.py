"""The GRPO learning check of ``tests/methods/graphscout/test_grpo_training.py`` over several seeds and thread counts.

    python benchmarks/bench_grpo_learning_check.py [--seeds 0 1 2 3 4] [--threads 1 2] [--out DIR]
        [--set key=value ...]

Each run does what the fixed-seed test does, with the seed (``--seeds``) used for the tiny model's initialisation, the
question draw, the warm start and the rollouts, and ``cpu_threads`` from ``--threads``: a GraphScout quiz of the small
clinical test graph (the deterministic quizzer), a tiny Qwen3 whose tokenizer is trained on the scripted solver's
trajectories, then ``train_graphscout`` with ``LEARNING_CHECK`` (the tiny-cpu preset, 40 warm-start epochs, 40
steps). It prints one line per run: the mean training reward of the first and the last 20% of the steps, the gain
(the test asserts ≥ 0.1), the share of rollouts that answered, and the run's CPU time (this process; the sandbox
workers not counted) and wall time. Every figure is a tiny-model pipeline check, not a model result.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ark.methods.graphscout.options import GraphScoutOptions  # noqa: E402
from ark.methods.graphscout.quiz import GraphScoutQuizConfig, generate_graphscout_quiz  # noqa: E402
from ark.methods.graphscout.training.data import training_questions, warm_start_samples  # noqa: E402
from ark.methods.graphscout.training.environment import ScoutWorld  # noqa: E402
from ark.methods.graphscout.training.settings import LEARNING_CHECK, GRPOSettings  # noqa: E402
from ark.methods.graphscout.training.trainer import train_graphscout  # noqa: E402
from ark.methods.options import parse_set_values  # noqa: E402
from ark.storage.jsonl import write_jsonl_atomic  # noqa: E402
from ark.training.tiny_model import TinyModelSpec, build_tiny_model  # noqa: E402
from tests.support.graphs import build_clinical_graph  # noqa: E402

# The test's tiny model: hidden 64, 2 layers, a BPE whose merges may span words.
TINY_SPEC = TinyModelSpec(hidden_size=64, head_dim=16, vocab_size=4096, tokenizer_cross_words=True)


def window_means(curve: list[float]) -> tuple[float, float]:
    """Mean reward of the first and the last 20% of the steps (at least one step each)."""
    k = max(1, round(0.2 * len(curve)))
    return sum(curve[:k]) / k, sum(curve[-k:]) / k


def one_run(graph, out: Path, seed: int, threads: int, sets: dict) -> dict:
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    quiz = out / "quiz.jsonl"
    write_jsonl_atomic(quiz, generate_graphscout_quiz(graph, GraphScoutQuizConfig(n=40, seed=0)).questions)
    settings = GRPOSettings(**{**LEARNING_CHECK, "progress": False, "seed": seed, "cpu_threads": threads, **sets})
    world = ScoutWorld(graph, GraphScoutOptions(system_prompt=settings.system_prompt, max_turns=settings.max_turns))
    try:
        samples = warm_start_samples(world, training_questions(quiz, graph))
    finally:
        world.close()
        world.engine.close()
    base = build_tiny_model(out / "base", samples=samples, spec=TINY_SPEC, seed=seed)
    result = train_graphscout(graph, quiz, base, out / "run", settings)
    progress = [json.loads(line) for line in (out / "run" / "progress.jsonl").read_text().splitlines()]
    first, last = window_means(result.reward_curve)
    answered_first, answered_last = window_means([p["answered"] or 0.0 for p in progress])
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = sum(getattr(cpu_after, f) - getattr(cpu_before, f) for f in ("ru_utime", "ru_stime"))
    return {"seed": seed, "threads": threads, "steps": result.steps, "first": round(first, 3),
            "last": round(last, 3), "gain": round(last - first, 3), "answered_first": round(answered_first, 2),
            "answered_last": round(answered_last, 2), "cpu_s": round(cpu),
            "wall_s": round(time.perf_counter() - started),
            "curve": [round(r, 3) for r in result.reward_curve]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here (default: a temporary folder)")
    parser.add_argument("--set", dest="sets", action="append", default=[])
    args = parser.parse_args()
    sets = parse_set_values(args.sets)
    graph = build_clinical_graph()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        root = args.out or Path(scratch)
        for seed in args.seeds:
            for threads in args.threads:
                row = one_run(graph, root / f"seed{seed}-threads{threads}", seed, threads, sets)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print("\n[tiny-model pipeline check] GRPO learning check, mean training reward, first → last 20% of steps:")
    print("| seed | torch threads | first 20% | last 20% | gain | answered first → last | CPU s | wall s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['seed']} | {r['threads']} | {r['first']:.3f} | {r['last']:.3f} | {r['gain']:+.3f} | "
              f"{r['answered_first']:.2f} → {r['answered_last']:.2f} | {r['cpu_s']} | {r['wall_s']} |")
    gains = [r["gain"] for r in rows]
    print(f"\nruns with gain ≥ 0.1: {sum(g >= 0.1 for g in gains)} of {len(gains)}; smallest gain {min(gains):+.3f}")


if __name__ == "__main__":
    main()
