#!/usr/bin/env bash
# The ARK paper's experiments on HPO, end to end, each into its report folder (report.md with Markdown tables,
# PNG plots, results.json): Table 2 (ablations, a seeded random 10% of the queries), Table 3 (fusion), Table 4
# (relevance: field-aware BM25, plain BM25, dense MiniLM), Figure 2 (budget: agents 1,2,3 x T_max 5,10,20 on a
# seeded random fraction, BUDGET_FRACTION, default 0.25), Table 8 (agents-vs-steps, T = 10), Figure 3 and
# Tables 9-10 (tool-use) and Figure 5 (neighborhood).
#   usage: benchmarks/recipes/hpo_experiments.sh [QUERIES] [OUT_DIR] [ark experiment flags...]
# QUERIES defaults to the HPO quiz test split (benchmarks/recipes/hpo_quiz.sh writes it); OUT_DIR to
# benchmarks/out/hpo_experiments. Without --model/--base-url the agents are the offline policy (labelled as such in
# every table row). Runs are resumable and shared between experiments (OUT_DIR/runs): rerun to continue.
set -euo pipefail
queries="${1:-benchmarks/out/hpo_quiz/splits/test.jsonl}"
out_dir="${2:-benchmarks/out/hpo_experiments}"
shift $(( $# > 2 ? 2 : $# ))
python="${PYTHON:-python}"
if [ ! -f "$queries" ]; then
  echo "no query file $queries: run benchmarks/recipes/hpo_quiz.sh first" >&2
  exit 2
fi
for name in ablations fusion relevance budget agents-vs-steps tool-use neighborhood; do
  extra=()
  if [ "$name" = budget ]; then extra=(--fraction "${BUDGET_FRACTION:-0.25}"); fi
  start=$(date +%s)
  "$python" -m ark.cli.main experiment "$name" hpo --queries "$queries" --out "$out_dir/$name" \
    --runs "$out_dir/runs" --no-progress "${extra[@]}" "$@"
  echo "== $name: $(( $(date +%s) - start )) s -> $out_dir/$name/report.md"
done
