"""mFAR on the HPO quiz beside bm25, dense and bm25-rel, in one run: trains ``mfar`` on the quiz's train split
with three seeds (``ark train mfar``), evaluates every method on the test split (``ark eval``) and prints Hit@1,
Hit@5, R@20 and MRR (×100; mfar as mean ± std over the seeds), training seconds per seed, the model size and the
machine's load average (state it beside any figure quoted from here).

    python benchmarks/bench_mfar.py --splits benchmarks/out/hpo_quiz/splits [--seeds 0,1,2] [--out DIR]

The quiz comes from ``benchmarks/recipes/hpo_quiz.sh``. Runs resume: a trained model or a finished run folder in
--out is reused.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

METRICS = ("hit@1", "hit@5", "recall@20", "mrr")


def _ark(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "ark.cli.main", *args], check=True)


def _eval(splits: Path, out: Path, name: str, method: str, *extra: str) -> dict[str, float]:
    run = out / f"run-{name}"
    if not (run / "summary.json").is_file():
        _ark("eval", "hpo", "--queries", str(splits / "test.jsonl"), "--method", method, *extra, "--run-dir",
             str(run), "--no-progress")
    return json.loads((run / "summary.json").read_text())["overall"]


def _train(splits: Path, out: Path, seed: int) -> tuple[Path, float]:
    model = out / f"mfar-seed{seed}"
    started = time.perf_counter()
    if not (model / "model.json").is_file():
        _ark("train", "mfar", "hpo", "--queries", str(splits / "train.jsonl"), "--out", str(model), "--seed",
             str(seed), "--no-progress")
    return model, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=Path, default=Path("benchmarks/out/hpo_quiz/splits"))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/mfar"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = {name: _eval(args.splits, args.out, name, name) for name in ("bm25", "dense", "bm25-rel")}
    runs, seconds, size = [], [], 0
    for seed in (int(s) for s in args.seeds.split(",")):
        model, spent = _train(args.splits, args.out, seed)
        seconds.append(spent)
        size = sum(p.stat().st_size for p in model.iterdir() if p.is_file())
        runs.append(_eval(args.splits, args.out, f"mfar-seed{seed}", "mfar", "--set", f"model={model}"))
    print(f"HPO quiz test split; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| method | " + " | ".join(METRICS) + " |")
    print("|---|" + "---:|" * len(METRICS))
    for name, overall in rows.items():
        print(f"| {name} | " + " | ".join(f"{100 * overall[m]:.2f}" for m in METRICS) + " |")
    cells = []
    for m in METRICS:
        values = [100 * r[m] for r in runs]
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        cells.append(f"{statistics.mean(values):.2f} ± {spread:.2f}")
    print(f"| mfar (mean ± std, {len(runs)} seeds) | " + " | ".join(cells) + " |")
    print(f"mfar training seconds per seed (0 when reused): {', '.join(f'{s:.0f}' for s in seconds)}; "
          f"model folder {size / 1e3:.1f} kB")


if __name__ == "__main__":
    main()
