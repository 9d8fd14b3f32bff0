"""MoR on the HPO quiz (recipe ``hpo``): trained on the train split with several seeds (validation split choosing
the epoch), scored on the test split beside ``bm25``, ``bm25-rel`` and ``dense``; training time and model size.

    python benchmarks/bench_mor_hpo.py [--work DIR] [--seeds 0 1 2] [--threads 1] [--jobs 1] [--skip-dense]

Prints one table (Hit@1, Hit@5, R@20, MRR in %; MoR as mean ± standard deviation over the seeds), whether MoR's mean
MRR and R@20 exceed each baseline's by more than one standard deviation, each seed's training time (planning the
training and validation questions included) and the model folder's size and parameter count, and the machine's load
average before and after (the machine is shared: times depend on it). The training and validation questions are
planned once and the seeds train from those pools (``--jobs`` of them at once, each in its own process); a seed's
training time is its own plus that planning. Everything runs offline (the offline planner); every method is scored
on its whole ranking of 100 nodes, as ``ark eval`` does.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def _threads(argv: list[str]) -> int:
    threads = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else 1
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))
    return threads


THREADS = _threads(sys.argv)

import numpy as np  # noqa: E402  (after the thread variables)

METRICS = ("hit@1", "hit@5", "recall@20", "mrr")


def splits(graph, work: Path) -> Path:
    from ark.quiz import generate_quiz
    from ark.quiz.output import write_splits
    from ark.quiz.recipes import recipe

    folder = work / "quiz"
    if not (folder / "test.jsonl").is_file():
        write_splits(generate_quiz(graph, recipe("hpo")).questions, folder)
    return folder


def score(retriever, graph, questions) -> dict[str, float]:
    from ark.metrics.ranking import mean_metrics, query_metrics

    rows = []
    for q in questions:
        output = retriever.retrieve(q.query, 100)
        rows.append(query_metrics([graph.node_id(i) for i in output.indices], q.answer_ids))
    means = mean_metrics(rows)
    return {m: 100 * means[m] for m in METRICS}


def plan_pools(graph, folder: Path, work: Path) -> tuple[Path, float]:
    """The training and validation questions planned and walked once (shared by every seed); seconds taken."""
    from ark.loaders.queries import read_query_jsonl
    from ark.methods.mor.spec import MoRSettings
    from ark.methods.mor.training import Pipeline, save_pools

    path = work / "pools.npz"
    started = time.perf_counter()
    pipeline = Pipeline(graph, MoRSettings())
    groups = {name: pipeline.labelled(read_query_jsonl(folder / f"{name}.jsonl"), lambda done, total: None)
              for name in ("train", "val")}
    save_pools(path, groups)
    return path, time.perf_counter() - started


def train_and_score(work: Path, folder: Path, pools: Path, seed: int) -> tuple[dict, dict, float, int]:
    """One seed in its own process: train from the shared pools, score the test split."""
    import shutil

    import torch

    from ark.loaders.queries import read_query_jsonl
    from ark.loaders.registry import open_graph
    from ark.methods import build_method
    from ark.methods.mor.spec import MoRSettings
    from ark.methods.mor.training import train_mor

    torch.set_num_threads(THREADS)
    graph = open_graph("hpo")
    out = work / f"mor-seed{seed}"
    shutil.rmtree(out, ignore_errors=True)
    (out / "training").mkdir(parents=True)
    shutil.copy(pools, out / "training" / "pools.npz")
    started = time.perf_counter()
    body = train_mor(graph, read_query_jsonl(folder / "train.jsonl"), read_query_jsonl(folder / "val.jsonl"), out,
                     MoRSettings(seed=seed), lambda message: None, lambda label, done, total: None)
    seconds = time.perf_counter() - started
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    test = read_query_jsonl(folder / "test.jsonl")
    metrics = score(build_method("mor", graph, {"model": str(out), "planner": "offline"}), graph, test)
    return metrics, body, seconds, size


def scored_folder(graph, test, folder: Path) -> tuple[dict, dict, float, int]:
    """A trained folder's test metrics, its mor.json, training seconds and size."""
    import json

    from ark.methods import build_method

    body = json.loads((folder / "mor.json").read_text())
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    metrics = score(build_method("mor", graph, {"model": str(folder), "planner": "offline"}), graph, test)
    return metrics, body, body["seconds_total"], size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("benchmarks/out/mor_hpo"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="seeds trained at once, one process each")
    parser.add_argument("--skip-dense", action="store_true", help="leave out dense (embeds the graph once)")
    parser.add_argument("--models", type=Path, nargs="+", help="score these trained folders (of `ark train mor "
                        "hpo`, seeds in --seeds order) instead of training; their mor.json gives the times")
    args = parser.parse_args()
    from concurrent.futures import ProcessPoolExecutor

    from ark.loaders.queries import read_query_jsonl
    from ark.loaders.registry import open_graph
    from ark.methods import build_method

    load_before = os.getloadavg()
    graph = open_graph("hpo")
    args.work.mkdir(parents=True, exist_ok=True)
    folder = splits(graph, args.work)
    test = read_query_jsonl(folder / "test.jsonl")
    rows: dict[str, dict[str, float]] = {}
    if args.models:
        planning_s = float("nan")
        results = [scored_folder(graph, test, folder) for folder in args.models]
    else:
        pools, planning_s = plan_pools(graph, folder, args.work)
        with ProcessPoolExecutor(max_workers=args.jobs) as workers:
            running = [workers.submit(train_and_score, args.work, folder, pools, seed) for seed in args.seeds]
            results = [job.result() for job in running]
    for name in ("bm25", "bm25-rel", *(() if args.skip_dense else ("dense",))):
        rows[name] = score(build_method(name, graph), graph, test)
    per_seed = [metrics for metrics, _, _, _ in results]
    table = np.array([[s[m] for m in METRICS] for s in per_seed])
    mean, std = table.mean(axis=0), table.std(axis=0, ddof=1) if len(per_seed) > 1 else np.zeros(len(METRICS))
    print(f"HPO quiz test split: {len(test)} questions; threads {THREADS} per process, {args.jobs} seed(s) at once; "
          f"load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f} (2 cores, shared)")
    print(f"{'method':<22}" + "".join(f"{m:>18}" for m in ("Hit@1", "Hit@5", "R@20", "MRR")))
    for name, values in rows.items():
        print(f"{name:<22}" + "".join(f"{values[m]:>18.2f}" for m in METRICS))
    print(f"{'mor (' + str(len(per_seed)) + ' seeds)':<22}" + "".join(f"{f'{a:.2f} ± {b:.2f}':>18}"
                                                                       for a, b in zip(mean, std, strict=True)))
    for name, values in rows.items():
        for metric, index in (("MRR", 3), ("R@20", 2)):
            margin = mean[index] - values[METRICS[index]]
            print(f"mor − {name} on {metric}: {margin:+.2f} (std {std[index]:.2f}): "
                  f"{'above by more than one std' if margin > std[index] else 'NOT above by one std'}")
    if not args.models:
        print(f"planning the training and validation questions (once, shared by the seeds): {planning_s:.0f} s")
    for seed, (metrics, body, seconds, size) in zip(args.seeds, results, strict=True):
        print(f"seed {seed}: test MRR {metrics['mrr']:.2f}; trained in {seconds:.0f} s (+ planning), best epoch "
              f"{body['best_epoch']}/{body['epochs']}, validation MRR {body['val_mrr']:.3f}; model folder "
              f"{size / 1e3:.0f} kB, {body['parameters']:,} parameters")


if __name__ == "__main__":
    main()
