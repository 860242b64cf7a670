#!/usr/bin/env bash
# One-GPU run for larger models (bf16, vLLM rollouts colocated). MODEL: any HF causal LM folder
# (e.g. a 1.5B-7B coder model already on disk). REFERENCE_URL: a served reference model for the
# difficulty filter (ExecVerify used Qwen2.5-Coder-7B-Instruct). Stage 2 needs code-generation data with
# tests (codegen.jsonl from `train data`, or your own {prompt, tests} JSONL).
# Usage: MODEL=/path/to/model training/recipes/gpu-1.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/gpu}
: "${MODEL:?set MODEL to an HF model folder}"
X=".venv/bin/execsim train"
REF=()
if [ -n "${REFERENCE_URL:-}" ]; then REF=(--reference-url "$REFERENCE_URL" --samples 10 --max-pass 3); fi

$X synth  --out "$OUT/synth" --programs 40000 --seed 0 "${REF[@]}"
$X data   --programs "$OUT/synth/programs.jsonl" --out "$OUT/data"
$X sft    --model "$MODEL" --data "$OUT/data/sft.jsonl" --out "$OUT/sft" --full --format chat \
          --max-steps 3000 --lr 1e-5 --max-length 4096 --batch-size 8 --grad-accum 2 --gradient-checkpointing \
          --save-steps 500
$X export --checkpoint "$OUT/sft/model" --out "$OUT/export-sft" --summary "$OUT/sft/summary.json" --card "$OUT/synth/card.json"
$X rl     --stage 1 --model "$OUT/export-sft/merged" --data "$OUT/data/rl.jsonl" --out "$OUT/rl1" --full \
          --max-steps 500 --num-generations 8 --batch-size 8 --grad-accum 8 --max-completion-length 2048 --lr 1e-6 --vllm on
$X export --checkpoint "$OUT/rl1/model" --out "$OUT/export-rl1" --summary "$OUT/rl1/summary.json"
$X rl     --stage 2 --model "$OUT/export-rl1/merged" --data "$OUT/data/codegen.jsonl" --out "$OUT/rl2" --full \
          --max-steps 500 --num-generations 8 --batch-size 8 --grad-accum 8 --max-completion-length 2048 --lr 1e-6 --vllm on
$X export --checkpoint "$OUT/rl2/model" --out "$OUT/export" --card "$OUT/synth/card.json" \
          --summary "$OUT/sft/summary.json" --summary "$OUT/rl1/summary.json" --summary "$OUT/rl2/summary.json"
