"""The ARK paper's Table 1 (STaRK synthetic test sets) for one STaRK graph: our runs beside the reported numbers.

    usage: python benchmarks/stark_table.py NAME RUNS_DIR --qa QA_DIR [--split test] [--out FILE.md]

Reads ``RUNS_DIR/<method>/summary.json`` and ``config.json`` of the runs ``benchmarks/recipes/stark.sh`` made (one
``ark eval`` run folder per method) and prints one Markdown row per Table 1 row: how ours ran (the model, or the
offline policy, named), its Hit@1 / Hit@5 / R@20 / MRR (x100, STaRK semantics) and, in their own labelled columns,
the paper's Hit@1 / R@20 / MRR. A row whose method is not registered here says "not available"; one that needs a
model and got none says so (the reason is the last line of ``RUNS_DIR/<method>.err``). The header names the split,
its question count in the released split file and the count in the paper's Table 6 (they differ: see docs/guide/data.md,
"STaRK's test splits"). The reported numbers are data here, never measured.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DATASETS = ("amazon", "mag", "prime")
# ARK paper (Polonuer et al.), Table 1, as printed: (Hit@1, R@20, MRR) on AMAZON, MAG, PRIME.
TABLE_1: dict[str, tuple[tuple[float, float, float], ...]] = {
    "BM25": ((44.94, 53.77, 55.30), (25.85, 45.69, 34.91), (12.75, 31.25, 19.84)),
    "ada-002": ((39.16, 53.29, 50.35), (29.08, 48.36, 38.62), (12.63, 36.00, 21.41)),
    "GritLM-7B": ((42.08, 56.52, 53.46), (37.90, 46.40, 47.25), (15.57, 39.09, 24.11)),
    "KAR": ((54.20, 57.24, 61.29), (50.47, 60.28, 57.51), (30.35, 50.81, 39.22)),
    "Think-on-Graph + GPT-4o": ((20.67, 25.81, 30.90), (23.33, 48.03, 36.38), (16.67, 54.35, 27.02)),
    "Think-on-Graph + LLaMA3": ((4.21, 2.61, 5.25), (12.00, 6.77, 12.67), (21.92, 33.84, 26.61)),
    "ARK": ((55.82, 60.61, 64.77), (73.40, 84.47, 79.87), (48.20, 69.46, 57.68)),
    "mFAR": ((53.0, 66.3, 64.3), (55.9, 74.1, 64.3), (40.0, 72.6, 52.0)),
    "MoR": ((52.19, 59.92, 62.24), (58.19, 75.01, 67.14), (36.41, 63.48, 46.92)),
    "GraphFlow": ((47.85, 36.15, 55.49), (39.09, 57.18, 47.82), (51.39, 79.71, 61.37)),
    "AvaTaR": ((49.90, 60.60, 58.70), (44.36, 50.63, 51.15), (18.40, 39.30, 26.73)),
    "ARK distilled": ((54.99, 60.31, 64.24), (61.66, 81.39, 70.09), (31.87, 57.22, 41.08)),
}
# Table 1's rows and the method each is here (None: no such method; ada-002 and GritLM are other embedders than
# ours, ToG + LLaMA3 another backbone, the distilled ARK a trained student).
ROW_METHODS = {"BM25": "bm25", "ada-002": None, "GritLM-7B": None, "KAR": "kar", "Think-on-Graph + GPT-4o": "tog",
               "Think-on-Graph + LLaMA3": None, "ARK": "ark", "mFAR": "mfar", "MoR": "mor", "GraphFlow": "graphflow",
               "AvaTaR": "avatar", "ARK distilled": None}
# The ARK paper's Table 6: (train, validation, test) questions per graph.
TABLE_6 = {"prime": (6162, 2240, 2016), "mag": (7993, 2664, 2664), "amazon": (5915, 1547, 1638)}
METRICS = ("hit@1", "hit@5", "recall@20", "mrr")


def split_size(qa_dir: Path, split: str) -> int:
    """Question ids in the released split file (one a line)."""
    return len((qa_dir / "split" / f"{split}.index").read_text(encoding="utf-8").split())


def row_status(runs: Path, method: str | None, registered: set[str], split: str) -> tuple[str, str, dict | None]:
    """(run with, status, summary) of one Table 1 row's run folder."""
    if method is None:
        return "—", "not available (no such method here)", None
    if method not in registered:
        return "—", f"not available ({method} is not registered)", None
    summary_file = runs / method / "summary.json"
    if not summary_file.is_file():
        err = runs / f"{method}.err"
        lines = [line.strip() for line in err.read_text(encoding="utf-8").splitlines() if line.strip()] \
            if err.is_file() else []
        return "—", f"not run: {lines[-1][:120]}" if lines else "not run", None
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    config = json.loads((runs / method / "config.json").read_text(encoding="utf-8"))
    if config.get("split") != split:
        return "—", f"run on split {config.get('split')!r}, not {split!r}: not shown", None
    model = summary.get("run", {}).get("llm") or config.get("llm")
    run_with = "offline policy (not an LLM)" if model == "offline" else str(model) if model else "no model"
    return run_with, "ran", summary


def table(name: str, runs: Path, qa_dir: Path, split: str) -> str:
    from ark.methods.registry import method_specs

    column = DATASETS.index(name)
    registered = set(method_specs())
    released = split_size(qa_dir, split)
    paper = dict(zip(("train", "val", "test"), TABLE_6[name], strict=True)).get(split)
    lines = [f"**ARK Table 1 on STaRK-{name.upper()}, split `{split}`: {released:,} questions in the released "
             f"split file" + (f"; the paper's Table 6 lists {paper:,}**" if paper is not None else "**"), "",
             "| Method | Ours: run with | Status | n | Hit@1 | Hit@5 | R@20 | MRR | Paper: Hit@1 | Paper: R@20 | "
             "Paper: MRR |", "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, method in ROW_METHODS.items():
        run_with, status, summary = row_status(runs, method, registered, split)
        overall = (summary or {}).get("overall", {})
        ours = [f"{100 * overall[m]:.2f}" if m in overall else "—" for m in METRICS]
        reported = [f"{value:.2f}" for value in TABLE_1[label][column]]
        n = str(overall.get("n", "—"))
        lines.append(f"| {label} | {run_with} | {status} | {n} | " + " | ".join(ours + reported) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=DATASETS)
    parser.add_argument("runs", type=Path, help="folder of the recipe's run folders, one per method")
    parser.add_argument("--qa", type=Path, required=True, help="the dataset's QA folder (stark_qa/, split/)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--out", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    text = table(args.name, args.runs, args.qa, args.split)
    print(text, end="")
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
