"""A run on Ray against the same run done locally: time, and whether the results are the same.

    python benchmarks/bench_ray.py [--queries FILE] [--graph hpo] [--method ark] [--workers N] [--ray ADDRESS]
                                   [--tests]

Runs ``ark eval GRAPH -m METHOD --offline -q FILE`` twice in subprocesses, into two fresh run folders: once in
this process's machine as usual, once with ``--ray ADDRESS`` (default ``local``: a Ray instance started for the run
on this machine). It prints each command's wall time (the Ray one includes starting Ray and its workers), the
retrieval time the run reports, Hit@1/Hit@5/R@20/MRR of both, and whether the result lines are identical once
their ``wall_s`` field is set aside and they are put in id order (the order lines are written in follows completion
in both runs). The default queries are the HPO quiz test split (``benchmarks/recipes/hpo_quiz.sh`` writes it).
Figures are of the offline policy (no LLM). ``--tests`` also runs the Ray tests and the budget's tests (all of
them are in the default test run too).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_QUERIES = REPO / "benchmarks" / "out" / "hpo_quiz" / "splits" / "test.jsonl"


def run(args: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ark.cli.main", *args], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "COLUMNS": "120"})
    if done.returncode != 0:
        sys.exit(f"ark {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return time.perf_counter() - started, done.stderr


def results(folder: Path) -> list[dict]:
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines() if line.strip()]
    for row in rows:
        row.pop("wall_s", None)
    return sorted(rows, key=lambda row: row["id"])


def metrics(folder: Path) -> dict[str, float]:
    overall = json.loads((folder / "summary.json").read_text())["overall"]
    return {name: round(100 * overall[key], 2) for name, key in
            (("Hit@1", "hit@1"), ("Hit@5", "hit@5"), ("R@20", "recall@20"), ("MRR", "mrr"))}


def reported_seconds(stderr: str) -> str:
    line = next((line for line in stderr.splitlines() if " new, " in line and " queries (" in line), "")
    return line.split(" queries (")[-1].split(")")[0] if line else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    parser.add_argument("--graph", default="hpo")
    parser.add_argument("--method", default="ark")
    parser.add_argument("--workers", type=int, default=None, help="--ray-workers (default: one per CPU)")
    parser.add_argument("--ray", default="local", help="--ray ADDRESS (default: local)")
    parser.add_argument("--tests", action="store_true",
                        help="also run the Ray tests (tests/eval/test_ray_runs.py, tests/eval/test_ray_budget.py)")
    args = parser.parse_args()
    if not args.queries.is_file():
        sys.exit(f"{args.queries} not found; write it with benchmarks/recipes/hpo_quiz.sh")

    with tempfile.TemporaryDirectory(prefix="ark-bench-ray-") as tmp:
        common = ["eval", args.graph, "-m", args.method, "--offline", "-q", str(args.queries), "--no-progress"]
        # Open (or build) the graph and its indexes once, so neither timed run pays for a first build.
        run([*common, "--limit", "1", "--run-dir", str(Path(tmp) / "warm")])
        local_s, local_err = run([*common, "--run-dir", str(Path(tmp) / "local")])
        workers = ["--ray-workers", str(args.workers)] if args.workers else []
        ray_s, ray_err = run([*common, "--run-dir", str(Path(tmp) / "ray"), "--ray", args.ray, *workers])
        note = next((line for line in ray_err.splitlines() if "machine(s)" in line), "")
        same = results(Path(tmp) / "local") == results(Path(tmp) / "ray")
        n = len(results(Path(tmp) / "local"))
        print(f"{args.graph} · {args.method} (offline policy) · {args.queries.name} · {n} queries · "
              f"{os.cpu_count()} CPUs here")
        print(f"{'run':<8} {'command s':>10} {'retrieval s':>12}  metrics")
        for name, seconds, err in (("local", local_s, local_err), ("ray", ray_s, ray_err)):
            print(f"{name:<8} {seconds:>10.1f} {reported_seconds(err):>12}  {metrics(Path(tmp) / name)}")
        print(note)
        print(f"results identical (wall_s aside, id order): {same}")
    if args.tests:
        code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:warnings", "--durations=5",
                                "tests/eval/test_ray_runs.py", "tests/eval/test_ray_budget.py"], cwd=REPO)
        if code:
            sys.exit(code)
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
