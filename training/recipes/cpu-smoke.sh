#!/usr/bin/env bash
# CPU smoke run (a few minutes on 2 idle cores): every stage once (SFT twice: a run and its resumption),
# tiny sizes, the real default model.
# Needs the default model prepared (`execsim model prepare`) and the train extra installed.
# Usage: training/recipes/cpu-smoke.sh [OUT]   (default OUT: runs/smoke)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/smoke}
MODEL=${MODEL:-${EXECSIM_DATA_DIR:-.data}/models/smollm2-135m-instruct}
X=".venv/bin/execsim train"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

$X synth  --out "$OUT/synth" --programs 50 --seed 0
$X data   --programs "$OUT/synth/programs.jsonl" --out "$OUT/data" --styles call --kinds simulate,repair,solve \
          --rl-max-prompt-chars 1500
# two SFT runs: the second resumes the first (optimizer and step count), up to 10 steps in all
$X sft    --model "$MODEL" --data "$OUT/data/sft.jsonl" --out "$OUT/sft" --max-steps 5 --max-length 1024 --batch-size 2
$X sft    --model "$MODEL" --data "$OUT/data/sft.jsonl" --out "$OUT/sft" --max-steps 10 --max-length 1024 --batch-size 2 \
          --resume "$OUT/sft"
$X export --checkpoint "$OUT/sft/adapter" --out "$OUT/export-sft" --summary "$OUT/sft/summary.json" --card "$OUT/synth/card.json"
$X rl     --stage 1 --model "$OUT/export-sft/merged" --data "$OUT/data/rl.jsonl" --out "$OUT/rl1" \
          --max-steps 2 --num-generations 2 --batch-size 2 --max-completion-length 32 --lr 1e-5
$X export --checkpoint "$OUT/rl1/adapter" --out "$OUT/export" \
          --summary "$OUT/sft/summary.json" --summary "$OUT/rl1/summary.json" --card "$OUT/synth/card.json"
echo "servable: $OUT/export/merged (manifest: $OUT/export/manifest.json)"
