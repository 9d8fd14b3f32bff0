"""SeedER's Table 2b ablations over training seeds: mean ± std of the test-split metrics per ablation, and the change
from the full model's mean, from the run folders of ``benchmarks/recipes/seeder_ablations.sh`` (one OUT_ROOT per
seed) and of the full model (``benchmarks/seeder_hpo_dev.py``, one folder per seed).

    python benchmarks/seeder_ablation_table.py [--full RUN_S0 RUN_S1 RUN_S2] --roots ROOT_S0 ROOT_S1 ROOT_S2

Prints a Markdown table (metrics ×100; std is the sample standard deviation over seeds, as in the README's rows;
the Δ column only with ``--full``) with each variant's training seconds (the range over seeds; "-" for a model
trained by an earlier run and only re-evaluated).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

ABLATIONS = ("no-bpr", "single-trajectory", "no-baseline", "greedy-baseline", "rerank")
METRICS = (("hit@1", "Hit@1"), ("hit@5", "Hit@5"), ("recall@20", "R@20"), ("mrr", "MRR"))


def test_metrics(run_dir: Path) -> dict[str, float]:
    """The SeedER test-split metrics of one run folder (×100)."""
    report = json.loads((run_dir / "report.json").read_text())
    return {key: 100 * report["test"]["seeder"][key] for key, _ in METRICS}


def training_seconds(run_dirs: list[Path]) -> str:
    """The training seconds of these runs as a range ("-" where a run only re-evaluated an earlier model)."""
    seconds = [json.loads((d / "report.json").read_text()).get("training", {}).get("seconds_total") for d in run_dirs]
    if any(s is None for s in seconds) or not seconds:
        return "-"
    low, high = round(min(seconds)), round(max(seconds))
    return f"{low}" if low == high else f"{low}-{high}"


def summary(runs: list[dict[str, float]]) -> dict[str, tuple[float, float]]:
    """Per metric: mean and sample standard deviation over runs (0 for a single run)."""
    return {key: (statistics.mean(r[key] for r in runs),
                  statistics.stdev(r[key] for r in runs) if len(runs) > 1 else 0.0) for key, _ in METRICS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", type=Path, nargs="+", default=[], help="the full model's run folders")
    parser.add_argument("--roots", type=Path, nargs="+", required=True, help="one ablations OUT_ROOT per seed")
    parser.add_argument("--ablations", nargs="+", default=list(ABLATIONS), choices=ABLATIONS)
    args = parser.parse_args()
    full = summary([test_metrics(d) for d in args.full]) if args.full else None
    header = " | ".join(name for _, name in METRICS)
    delta_header = f" Δ mean ({' / '.join(name for _, name in METRICS)}) |" if full else ""
    print(f"| variant | seeds | {header} | training s |{delta_header}")
    print("|---|---:|" + "---:|" * (len(METRICS) + 1) + ("---|" if full else ""))
    if full:
        cells = " | ".join(f"{m:.2f} ± {s:.2f}" for m, s in full.values())
        print(f"| full SeedER | {len(args.full)} | {cells} | {training_seconds(args.full)} | – |")
    for ablation in args.ablations:
        dirs = [root / ablation for root in args.roots if (root / ablation / "report.json").exists()]
        if not dirs:
            print(f"| `{ablation}` | 0 | " + " | ".join("–" for _ in METRICS) + " | – |" + (" not trained |" if full
                                                                                           else ""))
            continue
        stats = summary([test_metrics(d) for d in dirs])
        cells = " | ".join(f"{m:.2f} ± {s:.2f}" if len(dirs) > 1 else f"{m:.2f}" for m, s in stats.values())
        delta = (" " + " / ".join(f"{stats[key][0] - full[key][0]:+.1f}" for key, _ in METRICS) + " |") if full else ""
        print(f"| `{ablation}` | {len(dirs)} | {cells} | {training_seconds(dirs)} |{delta}")


if __name__ == "__main__":
    main()
