#!/usr/bin/env bash
# The two tracked search-by-name evaluation sets, generated reproducibly from the HPO graph with fixed seeds
# (ark/quiz/lookup.py, recipes `hpo-names` and `hpo-layperson`), then the global-search check on the first:
#   usage: benchmarks/recipes/hpo_lookup.sh [OUT_DIR]      (default: benchmarks/out/hpo_lookup)
# Writes OUT_DIR/hpo_names.jsonl (500 genes, 500 diseases, 500 phenotypes, each queried by its name, a lower-cased
# punctuation-free variant and, for phenotypes, an exact synonym) and OUT_DIR/hpo_layperson.jsonl (500 questions
# asking for the clinical term of an HPO layperson synonym), prints their checksums, and runs
# benchmarks/bench_name_lookup.py (search_in_graph Hit@1 per node type; exit 1 below 0.95).
set -euo pipefail
out_dir="${1:-benchmarks/out/hpo_lookup}"
python="${PYTHON:-python}"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out_dir"
"$python" -m ark.cli.main quiz hpo --recipe hpo-names --out "$out_dir/hpo_names.jsonl"
"$python" -m ark.cli.main quiz hpo --recipe hpo-layperson --out "$out_dir/hpo_layperson.jsonl"
sha256sum "$out_dir/hpo_names.jsonl" "$out_dir/hpo_layperson.jsonl"
"$python" "$here/bench_name_lookup.py" "$out_dir/hpo_names.jsonl"
