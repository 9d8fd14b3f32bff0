#!/usr/bin/env bash
# The tracked question-shape set: families of named subtypes, conjunctions of two findings, an attribute (mode of
# inheritance) with a finding, and compound descriptions with a finding given by its definition, generated from the
# HPO graph with exact answers (true-path rule; ark/quiz/shapes.py, recipe `hpo-shapes`, 50 per shape, fixed seed),
# then scored with `ark eval` (per-template table), and the hand-checkable held-out set with the unanswerable shape:
#   usage: benchmarks/recipes/hpo_shapes.sh [OUT_DIR]      (default: benchmarks/out/hpo_shapes)
set -euo pipefail
out_dir="${1:-benchmarks/out/hpo_shapes}"
python="${PYTHON:-python}"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out_dir"
"$python" -m ark.cli.main quiz hpo --recipe hpo-shapes --out "$out_dir/hpo_shapes.jsonl"
sha256sum "$out_dir/hpo_shapes.jsonl"
"$python" -m ark.cli.main eval hpo --method ark --queries "$out_dir/hpo_shapes.jsonl" --run-dir "$out_dir/run-ark"
"$python" "$here/offline_shapes.py"
