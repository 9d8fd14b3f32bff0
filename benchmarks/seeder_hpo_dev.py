"""Development run of SeedER on the HPO quiz: train on the train split (model selection on val), then compare on
the test split with dense retrieval and the Table 1 graph baselines. The figures are DEVELOPMENT figures: one
training seed per run, and the test split is read only after training, for the final table.

    python benchmarks/seeder_hpo_dev.py QUIZ_DIR OUT_DIR [--preset hpo] [--seed 0] [--set key=value ...]
                                        [--baselines khop-filter,ppr,...] [--limit N] [--threads 1]

QUIZ_DIR is what ``benchmarks/recipes/hpo_quiz.sh QUIZ_DIR`` writes (``splits/{train,val,test}.jsonl``). The model
goes to OUT_DIR/model (an interrupted run resumes from its checkpoints); the report to OUT_DIR/report.json.
``--set`` takes dotted keys (``--set search.budget=200 --set lr=3e-4``); ``--test FILE`` evaluates an existing model
on another query file (e.g. ``../shared/data/phenopackets-dev.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("quiz_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--preset", default="hpo")
    parser.add_argument("--ablation", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    parser.add_argument("--baselines", default="khop-filter")
    parser.add_argument("--limit", type=int, default=None, help="test questions to evaluate (default: all)")
    parser.add_argument("--test", type=Path, default=None,
                        help="query file to evaluate on (default: QUIZ_DIR/splits/test.jsonl)")
    parser.add_argument("--report", default="report.json", help="report file name inside OUT_DIR")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    from ark.loaders import open_graph
    from ark.methods.options import parse_set_values
    from ark.methods.seeder.baselines import make_baseline
    from ark.methods.seeder.config import train_settings
    from ark.methods.seeder.embeddings import open_graph_embeddings
    from ark.methods.seeder.method import SeederMethod
    from ark.methods.seeder.options import SeederOptions
    from ark.methods.seeder.pipeline import read_questions, train_seeder
    from ark.metrics import mean_metrics, query_metrics

    graph = open_graph("hpo")
    splits = args.quiz_dir / "splits"
    overrides = {**parse_set_values(args.overrides), "seed": args.seed}
    settings = train_settings(args.preset, args.ablation, overrides)
    model_dir = args.out_dir / "model"
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    report: dict = {"settings": settings.model_dump(mode="json"), "load_average": os.getloadavg()}
    if not (model_dir / "model.json").is_file():
        train = read_questions(splits / "train.jsonl", graph, log)
        val = read_questions(splits / "val.jsonl", graph, log)
        started = time.perf_counter()
        report["training"] = train_seeder(graph, train, model_dir, settings, val=val, progress=sys.stderr.isatty(),
                                          log=log)
        report["training"]["seconds_total"] = round(time.perf_counter() - started, 1)
        report["training"].pop("step_rewards", None)
        log(f"trained in {report['training']['seconds_total']:.0f} s (subgraphs "
            f"{report['training']['seconds_subgraphs']:.0f} s, policy {report['training']['seconds_training']:.0f} s)")
    test_file = args.test or splits / "test.jsonl"
    test = read_questions(test_file, graph, log)[: args.limit]
    embeddings = open_graph_embeddings(graph, None, progress=False)
    methods = {"seeder": SeederMethod(graph, SeederOptions(model=str(model_dir), torch_threads=args.threads))}
    for name in [n for n in args.baselines.split(",") if n]:
        methods[name] = make_baseline(name, graph)
    rows: dict[str, list[dict]] = {name: [] for name in ["dense", *methods]}
    latency: dict[str, list[float]] = {name: [] for name in rows}
    for question in test:
        gold = [int(a) for a in question.answers]
        embeddings._memo.clear()
        start = time.perf_counter()
        sims = embeddings.node_similarities(embeddings.query(question.text))
        dense = embeddings.seeds(sims, 100)
        latency["dense"].append(time.perf_counter() - start)
        rows["dense"].append(query_metrics(dense.tolist(), gold))
        for name, method in methods.items():
            getattr(method, "embeddings", embeddings)._memo.clear()  # each method embeds the question itself
            start = time.perf_counter()
            out = method.retrieve(question.text, 100)
            latency[name].append(time.perf_counter() - start)
            rows[name].append(query_metrics(out.indices, gold))
    report["test"] = {name: mean_metrics(r) for name, r in rows.items()}
    report["test_questions"] = len(test)
    report["median_ms"] = {name: 1000 * float(np.median(v)) for name, v in latency.items()}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / args.report).write_text(json.dumps(report, indent=1, default=str))
    print(f"DEVELOPMENT figures, {test_file} ({len(test)} questions), seed {args.seed}, preset {args.preset}"
          + (f", ablation {args.ablation}" if args.ablation else ""))
    print(f"{'method':<14}{'hit@1':>8}{'hit@5':>8}{'mrr':>8}{'r@20':>8}{'ms':>8}")
    for name, metrics in report["test"].items():
        print(f"{name:<14}{metrics['hit@1']:>8.3f}{metrics['hit@5']:>8.3f}{metrics['mrr']:>8.3f}"
              f"{metrics['recall@20']:>8.3f}{report['median_ms'][name]:>8.1f}")


if __name__ == "__main__":
    main()
