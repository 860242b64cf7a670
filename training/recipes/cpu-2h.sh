#!/usr/bin/env bash
# The CPU run behind checkpoints/smollm2-135m-nlex: SmolLM2-135M-Instruct, LoRA SFT on synthesised NLEX,
# evaluated against the base model on the dev benchmarks. At most two hours on 2 cores:
#   synth 4000 programs (~3 min) -> data (~3 min) -> base evaluation (CRUXEval-O NLEX on all 200 dev
#   items ~15 min, MBPP dev 170 problems ~15 min) -> SFT for a fixed 65 minutes (--max-minutes; the
#   number of steps is whatever the machine manages) -> export -> the same evaluation of the SFT model
#   (~20 min) -> export again with the results in the manifest.
# GRPO (execsim train rl) is not part of this recipe: on 2 cores a stage-1 step with 4 sampled
# completions takes minutes, so the two hours go to SFT; see gpu-1.sh and cpu-smoke.sh.
# Usage: training/recipes/cpu-2h.sh [OUT]   (default OUT: runs/cpu-2h)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/cpu-2h}
X=".venv/bin/execsim"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
$X model prepare
BASE=${MODEL:-${EXECSIM_DATA_DIR:-.data}/models/smollm2-135m-instruct}

$X train synth    --out "$OUT/synth" --programs 4000 --seed 0
$X train data     --programs "$OUT/synth/programs.jsonl" --out "$OUT/data" --styles cruxeval,call \
                  --max-completion-chars 1500 --rl-max-prompt-chars 2000
$X train evaluate --model "$BASE" --variant base --out "$OUT/eval/base"
$X train sft      --model "$BASE" --data "$OUT/data/sft.jsonl" --out "$OUT/sft" --format chat \
                  --max-minutes 65 --max-steps 2000 --lr 3e-4 --max-length 1024 --batch-size 1 --grad-accum 8 \
                  --threads 2
$X train export   --checkpoint "$OUT/sft/adapter" --out "$OUT/export" --summary "$OUT/sft/summary.json" \
                  --card "$OUT/synth/card.json"
$X train evaluate --model "$OUT/export/merged" --name smollm2-135m-nlex --variant sft \
                  --baseline "$OUT/eval/base" --out "$OUT/eval/sft"
$X train export   --checkpoint "$OUT/sft/adapter" --out "$OUT/export" --summary "$OUT/sft/summary.json" \
                  --card "$OUT/synth/card.json" --eval-results "$OUT/eval/sft/eval-results.json"
echo "adapter: $OUT/export/adapter  manifest: $OUT/export/manifest.json"
