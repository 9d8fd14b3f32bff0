#!/usr/bin/env bash
# SeedER's Table 2b ablations on the HPO quiz: train each ablation (preset hpo, one seed) one after the other with
# benchmarks/seeder_hpo_dev.py, evaluate it on the quiz test split, and print one table.
#   usage: benchmarks/recipes/seeder_ablations.sh QUIZ_DIR OUT_ROOT [SEED] [ABLATION ...]
# QUIZ_DIR is what benchmarks/recipes/hpo_quiz.sh writes. Each ablation goes to OUT_ROOT/<ablation>/ (model/,
# report.json) with its log in OUT_ROOT/<ablation>.err; an interrupted run resumes from the model's checkpoints and
# a finished one is only re-evaluated. Default ablations: all five, the cheapest first. Set ARK_HOME to a graph cache
# that already holds the hpo dense index, or the first run embeds the graph's 36,853 nodes (about 20 minutes).
set -euo pipefail
quiz_dir="${1:?usage: seeder_ablations.sh QUIZ_DIR OUT_ROOT [SEED] [ABLATION ...]}"
out_root="${2:?usage: seeder_ablations.sh QUIZ_DIR OUT_ROOT [SEED] [ABLATION ...]}"
seed="${3:-0}"
shift $(( $# < 3 ? $# : 3 ))
ablations=("$@")
[ ${#ablations[@]} -gt 0 ] || ablations=(rerank single-trajectory no-bpr no-baseline greedy-baseline)
python="${PYTHON:-python}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
mkdir -p "$out_root"
for ablation in "${ablations[@]}"; do
    echo "$(date -u +%T) training $ablation (seed $seed) -> $out_root/$ablation"
    "$python" benchmarks/seeder_hpo_dev.py "$quiz_dir" "$out_root/$ablation" --ablation "$ablation" --seed "$seed" \
        --baselines "" 2> "$out_root/$ablation.err" | tail -n 1
done
"$python" "$(dirname "$0")/../seeder_ablation_table.py" --roots "$out_root" --ablations "${ablations[@]}"
