#!/usr/bin/env bash
# CPU run of at most two hours on 2 cores with SmolLM2-135M-Instruct (LoRA, batch 2 x 512 tokens).
# Budget (see docs/training.md for the measured step times this is sized from):
#   synth 3000 programs ~4 min; data ~5 min; SFT 150 steps x (2 x 512 tokens x 4 accumulation) ~50 min;
#   RL stage 1 30 steps (4 x 128-token completions, prompts <= 2000 chars) ~40 min; exports ~2 min.
#   Estimates for an IDLE 2-core machine (~200 LoRA training tokens/s, environment.md); the step times
#   measured on a busy machine (docs/training.md) are 3-4x slower: check the first steps' s/it and
#   lower --max-steps to fit.
# Usage: training/recipes/cpu-2h.sh [OUT]   (default OUT: runs/cpu-2h). Set REFERENCE_URL to run the difficulty
# filter against a served reference model (ExecVerify: 10 samples, keep <= 3 right).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/cpu-2h}
MODEL=${MODEL:-${EXECSIM_DATA_DIR:-.data}/models/smollm2-135m-instruct}
X=".venv/bin/execsim train"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
REF=()
if [ -n "${REFERENCE_URL:-}" ]; then REF=(--reference-url "$REFERENCE_URL" --samples 10 --max-pass 3); fi

$X synth  --out "$OUT/synth" --programs 3000 --seed 0 "${REF[@]}"
$X data   --programs "$OUT/synth/programs.jsonl" --out "$OUT/data" --rl-max-prompt-chars 2000
$X sft    --model "$MODEL" --data "$OUT/data/sft.jsonl" --out "$OUT/sft" --format chat \
          --max-steps 150 --lr 2e-4 --max-length 512 --batch-size 2 --grad-accum 4
$X export --checkpoint "$OUT/sft/adapter" --out "$OUT/export-sft" --summary "$OUT/sft/summary.json" --card "$OUT/synth/card.json"
$X rl     --stage 1 --model "$OUT/export-sft/merged" --data "$OUT/data/rl.jsonl" --out "$OUT/rl1" \
          --max-steps 30 --num-generations 4 --batch-size 2 --max-completion-length 128 --lr 1e-5 --format chat
$X export --checkpoint "$OUT/rl1/adapter" --out "$OUT/export" \
          --summary "$OUT/sft/summary.json" --summary "$OUT/rl1/summary.json" --card "$OUT/synth/card.json"
