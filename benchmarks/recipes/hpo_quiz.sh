#!/usr/bin/env bash
# Build the HPO quiz benchmark reproducibly: the `hpo` recipe (ark/quiz/recipes.py) fixes the seed, the size
# (2,500 questions) and the STaRK-Prime-like template mix, so every run writes byte-identical files.
#   usage: benchmarks/recipes/hpo_quiz.sh [OUT_DIR]      (default: benchmarks/out/hpo_quiz)
# Writes OUT_DIR/hpo_quiz.jsonl (all questions, with a `split` field) and OUT_DIR/splits/{train,val,test}.jsonl,
# and prints the per-template table of answer-set sizes. Equivalent to `ark quiz hpo --recipe hpo ...`.
set -euo pipefail
out_dir="${1:-benchmarks/out/hpo_quiz}"
python="${PYTHON:-python}"
mkdir -p "$out_dir"
start=$(date +%s.%N)
"$python" -m ark.cli.quiz_cmd hpo --recipe hpo --out "$out_dir/hpo_quiz.jsonl" --split-dir "$out_dir/splits"
end=$(date +%s.%N)
echo "elapsed: $(echo "$end - $start" | bc) s (including opening the graph)"
sha256sum "$out_dir/hpo_quiz.jsonl"
