#!/usr/bin/env bash
# GraphScout's Table 1 on GRBench, from the downloaded files to the table in one command, one report per graph:
#   usage: benchmarks/recipes/grbench.sh ROOT [OUT_DIR] [ark experiment flags, e.g. --model M --base-url URL]
# ROOT is Graph-CoT's data/processed_data folder: one folder per graph holding graph.json (the Google Drive
# download) and data.json (the questions; Hugging Face PeterJinGo/GRBench), maple/<field>/ one level deeper. A
# folder without data.json is skipped (named). DOMAINS="biomedical maple/Physics" picks some. OUT_DIR (default
# benchmarks/out/grbench) keeps inputs/<graph>.sha256 (checksums, verified on every rerun), graphs/<graph>/ (the
# streaming import), runs/ (one `ark eval` run folder per row and configuration, shared and resumed on rerun) and
# reports/<graph>/report.md (our rows beside the paper's, F1 per difficulty level from the shipped level table).
# Without --model only GraphScout's scripted solver runs (labelled so); the prompting rows show "needs --model".
set -euo pipefail
root="${1:?usage: benchmarks/recipes/grbench.sh ROOT [OUT_DIR] [ark experiment flags...]}"
out="${2:-benchmarks/out/grbench}"
shift $(( $# < 2 ? $# : 2 ))
python="${PYTHON:-python}"
if [ -n "${DOMAINS:-}" ]; then
  read -r -a domains <<< "$DOMAINS"
else
  mapfile -t domains < <(cd "$root" && find . -mindepth 2 -maxdepth 3 -name graph.json -printf '%h\n' | sed 's|^\./||' | sort)
fi
if [ ${#domains[@]} -eq 0 ]; then echo "no graph.json under $root (expected Graph-CoT's processed_data folder)" >&2; exit 2; fi
mkdir -p "$out/inputs" "$out/graphs" "$out/reports" "$out/runs"
ran=0
for domain in "${domains[@]}"; do
  folder="$root/$domain"
  graph="$(basename "$domain")"
  if [ ! -f "$folder/graph.json" ] || [ ! -f "$folder/data.json" ]; then
    echo "== $domain: skipped (needs graph.json and data.json in $folder)"
    continue
  fi
  sums="$out/inputs/$graph.sha256"
  if [ -f "$sums" ]; then
    sha256sum --quiet -c "$sums" || { echo "$domain: the inputs differ from $sums: use a new OUT_DIR" >&2; exit 3; }
  else
    sha256sum "$folder/graph.json" "$folder/data.json" > "$sums.tmp" && mv "$sums.tmp" "$sums"
  fi
  if [ ! -d "$out/graphs/$graph" ]; then  # the import is atomic: a graph folder there is complete
    "$python" -m ark.cli.main graph import grbench "$folder" --out "$out/graphs/$graph"
  fi
  "$python" -m ark.cli.main experiment paper-table "$out/graphs/$graph" --paper graphscout \
    --queries "$folder/data.json" --out "$out/reports/$graph" --runs "$out/runs" --no-progress "$@" > /dev/null
  echo "== $domain (inputs: $sums): $out/reports/$graph/report.md"
  sed -n '/^\*\*Ours/,/^\*\*As reported/p' "$out/reports/$graph/report.md" | sed '$d'
  ran=$((ran + 1))
done
if [ "$ran" -eq 0 ]; then echo "no graph had both graph.json and data.json" >&2; exit 2; fi
