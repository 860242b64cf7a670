#!/usr/bin/env bash
# The CPU recipe behind checkpoints/smollm2-135m-nlex: SmolLM2-135M-Instruct, LoRA SFT on synthesised
# data for every prompt the pipeline sends (simulate, repair, solve), starting from the committed
# checkpoint's adapter (--init-adapter, so its steps count on), evaluated against that checkpoint on
# the dev benchmarks and promoted only if it beats it. At most two hours on 2 cores, and rerunnable:
# each run with the same OUT continues the SFT of the one before (--resume: optimizer and step count
# carried over; --max-steps counts from the first run), so training accumulates.
#   synth 4000 programs (~3 min) -> data (simulate + repair + solve; first run only) -> evaluation of
#   the committed checkpoint (CRUXEval-O with the app's simulate request on all 200 dev items, MBPP dev 170 problems; first run
#   only, ~30 min) -> SFT for SFT_MINUTES (default 45; --max-minutes, resumed when OUT/sft has a
#   checkpoint) -> export -> the same evaluation of the result (~20 min) -> export with the results
#   -> `train promote`: replaces checkpoints/smollm2-135m-nlex only when CRUXEval-O's paired interval
#   is above zero and MBPP shows no significant loss (it prints the comparison; a refusal ends the
#   recipe normally).
# GRPO (execsim train rl) is not part of this recipe: on 2 cores a stage-1 step with 4 sampled
# completions takes minutes, so the two hours go to SFT; see gpu-1.sh and cpu-smoke.sh.
# Usage: training/recipes/cpu-2h.sh [OUT]   (default OUT: runs/cpu-2h; SFT_MINUTES=45; NARRATION=compact for
# the shorter NLEX, docs/nlex.md; KINDS and MIX for train data's --kinds and --mix; PROMOTE=0 to skip the
# promotion)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/cpu-2h}
X=".venv/bin/execsim"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
$X model prepare
DATA_DIR=${EXECSIM_DATA_DIR:-.data}
BASE=${MODEL:-$DATA_DIR/models/smollm2-135m-instruct}
CURRENT=checkpoints/smollm2-135m-nlex

SEED=${SEED:-2}  # the committed checkpoint's data used seed 0: new programs, not the same ones again
[ -f "$OUT/synth/programs.jsonl" ] || $X train synth --out "$OUT/synth" --programs "${PROGRAMS:-4000}" --seed "$SEED"
[ -f "$OUT/data/sft.jsonl" ] || $X train data --programs "$OUT/synth/programs.jsonl" --out "$OUT/data" \
    --styles call,stdin --kinds "${KINDS:-simulate,repair,solve}" --mix "${MIX:-simulate=0.6,repair=0.25,solve=0.15}" \
    --max-completion-chars 1500 --rl-max-prompt-chars 2000 --seed "$SEED" \
    --narration "${NARRATION:-full}"
[ -f "$OUT/eval/current/eval-results.json" ] || $X train evaluate --model "$DATA_DIR/models/smollm2-135m-nlex" \
    --name smollm2-135m-nlex --variant current --out "$OUT/eval/current"
RESUME=()
if compgen -G "$OUT/sft/checkpoints/checkpoint-*" >/dev/null; then RESUME=(--resume "$OUT/sft"); fi
$X train sft      --model "$BASE" --data "$OUT/data/sft.jsonl" --out "$OUT/sft" --format chat "${RESUME[@]}" \
                  --init-adapter "$CURRENT/adapter" \
                  --max-minutes "${SFT_MINUTES:-45}" --max-steps 2000 --save-steps 20 --lr 3e-4 --max-length 1024 \
                  --batch-size 1 --grad-accum 8 --threads 2 --cpu-bf16
$X train export   --checkpoint "$OUT/sft/adapter" --out "$OUT/export" --summary "$OUT/sft/summary.json" \
                  --card "$OUT/synth/card.json"
rm -rf "$OUT/eval/sft"  # the adapter changed: its evaluation is new (the request cache would answer old replies)
$X train evaluate --model "$OUT/export/merged" --name smollm2-135m-nlex-candidate --variant sft \
                  --baseline "$OUT/eval/current" --baseline-variant current --out "$OUT/eval/sft"
$X train export   --checkpoint "$OUT/sft/adapter" --out "$OUT/export" --summary "$OUT/sft/summary.json" \
                  --card "$OUT/synth/card.json" --eval-results "$OUT/eval/sft/eval-results.json"
if [ "${PROMOTE:-1}" = 1 ]; then
    $X train promote --candidate "$OUT/export" --current "$CURRENT" --candidate-results "$OUT/eval/sft" \
                     --current-results "$OUT/eval/current" --target cruxeval-o || true
fi
echo "adapter: $OUT/export/adapter  manifest: $OUT/export/manifest.json  (rerun to train on)"
