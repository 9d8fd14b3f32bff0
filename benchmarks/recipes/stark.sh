#!/usr/bin/env bash
# The ARK paper's Table 1 on one STaRK graph, from the downloaded files to the table in one command:
#   usage: benchmarks/recipes/stark.sh ROOT NAME [OUT_DIR] [ark eval flags, e.g. --model M --base-url URL]
# ROOT is the download in the Hugging Face layout (snap-stanford/stark): ROOT/skb/NAME/processed/ (processed.zip
# extracted) and ROOT/qa/NAME/{stark_qa/stark_qa.csv,split/test.index} (qa/primekg also read for prime, as in
# STaRK's git history). NAME: prime, mag or amazon. OUT_DIR (default benchmarks/out/stark-NAME) keeps
# inputs.sha256 (the inputs' checksums, verified on every rerun), graph/ (the imported graph), runs/<method>/ (one
# `ark eval` run folder per method, the split named in its config.json; rerun to resume), runs/<method>.err and
# table.md. METHODS (default "bm25 ark") picks the methods; without --model, ark runs its offline policy (labelled
# so in the table) and model-only methods show "not run". SPLIT (default test) picks the split file.
set -euo pipefail
usage="usage: benchmarks/recipes/stark.sh ROOT NAME [OUT_DIR] [ark eval flags...]"
root="${1:?$usage}"
name="${2:?$usage}"
out="${3:-benchmarks/out/stark-$name}"
shift $(( $# < 3 ? $# : 3 ))
python="${PYTHON:-python}"
split="${SPLIT:-test}"
here="$(cd "$(dirname "$0")/.." && pwd)"
read -r -a methods <<< "${METHODS:-bm25 ark}"
case "$name" in prime|mag|amazon) ;; *) echo "NAME must be prime, mag or amazon, got '$name'" >&2; exit 2;; esac
skb="$root/skb/$name"
qa="$root/qa/$name"
if [ ! -d "$qa" ] && [ "$name" = prime ] && [ -d "$root/qa/primekg" ]; then qa="$root/qa/primekg"; fi
for needed in "$skb/processed" "$qa/stark_qa/stark_qa.csv" "$qa/split/$split.index"; do
  if [ ! -e "$needed" ]; then echo "missing $needed (download snap-stanford/stark into ROOT; see the header)" >&2; exit 2; fi
done
mkdir -p "$out/runs"
sums="$out/inputs.sha256"
if [ -f "$sums" ]; then
  sha256sum --quiet -c "$sums" || { echo "the inputs differ from $sums: use a new OUT_DIR" >&2; exit 3; }
  echo "== inputs: checksums match $sums"
else
  { find "$skb/processed" -type f -print0 | sort -z | xargs -0 sha256sum
    sha256sum "$qa/stark_qa/stark_qa.csv" "$qa/split/$split.index"; } > "$sums.tmp"
  mv "$sums.tmp" "$sums"
  echo "== inputs: checksums written to $sums"
fi
if [ ! -d "$out/graph" ]; then  # the import is atomic: a graph folder there is complete
  "$python" -m ark.cli.main graph import stark "$name" --root "$skb" --out "$out/graph"
fi
for method in "${methods[@]}"; do
  start=$(date +%s)
  if "$python" -m ark.cli.main eval "$out/graph" --method "$method" --queries "$qa" --split "$split" \
      --run-dir "$out/runs/$method" --no-progress "$@" > "$out/runs/$method.log" 2> "$out/runs/$method.err"; then
    echo "== $method: $(( $(date +%s) - start )) s -> $out/runs/$method"
  else
    echo "== $method: not run ($(tail -n 1 "$out/runs/$method.err"))"
  fi
done
"$python" "$here/stark_table.py" "$name" "$out/runs" --qa "$qa" --split "$split" --out "$out/table.md"
