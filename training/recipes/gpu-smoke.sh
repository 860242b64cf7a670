#!/usr/bin/env bash
# GPU smoke run (a few minutes): every GPU code path once, at toy size, on a randomly initialised 2-layer
# Llama (training.smoke; no weights travel): SFT with LoRA in bf16 and its resumption, with 2+ GPUs the
# same SFT as 2 processes under `accelerate launch` (DDP, training/recipes/accelerate/ddp.yaml), full SFT
# with gradient checkpointing and the chat format, export (merge), GRPO stage 1 (vLLM rollouts when vllm
# is installed), and serving the exported folder (vLLM when installed, else transformers on the GPU).
# Needs a CUDA GPU, torch and the train extra (trl, peft, datasets).
# DATA: a folder with sft.jsonl and rl.jsonl from `execsim train data` (made here when unset: that needs
# the sandbox). Where the sandbox cannot start, GRPO uses training.smoke.AnswerLengthRewardDouble.
# Prints one line per stage and writes OUT/summary.json.
# Usage: [DATA=folder] training/recipes/gpu-smoke.sh [OUT]   (default OUT: runs/gpu-smoke)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/gpu-smoke}
X=${EXECSIM:-.venv/bin/execsim}
PY=${PYTHON:-.venv/bin/python}
mkdir -p "$OUT"
SECONDS=0
stage() { printf '\n== %s (%d s so far)\n' "$*" "$SECONDS"; }

stage "machine"
$PY - <<'PY'
import torch, transformers, peft, trl
print(f"torch {torch.__version__}, transformers {transformers.__version__}, peft {peft.__version__}, trl {trl.__version__}")
print(f"cuda: {torch.cuda.is_available()}" + (f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""))
PY

stage "tiny model"
$PY -m training.smoke model "$OUT/tiny"

if [ -z "${DATA:-}" ]; then
    stage "data (synthesised programs, in the sandbox)"
    $X train synth --out "$OUT/synth" --programs 50 --seed 0
    $X train data --programs "$OUT/synth/programs.jsonl" --out "$OUT/data" --styles call --kinds simulate,repair \
        --rl-max-prompt-chars 1500
    DATA="$OUT/data"
fi

REWARD=()
stage "sandbox"
printf 'def f(x):\n    return x + 1\n' >"$OUT/probe.py"
if $X run "$OUT/probe.py" --call 'f(1)'; then
    echo "the sandbox runs: GRPO uses the stage's own rewards"
else
    echo "the sandbox cannot start here: GRPO uses training.smoke.AnswerLengthRewardDouble"
    REWARD=(--reward training.smoke:AnswerLengthRewardDouble)
fi

stage "SFT, LoRA, bf16: 5 steps, then resumed to 10"
$X train sft --model "$OUT/tiny" --data "$DATA/sft.jsonl" --out "$OUT/sft" --max-steps 5 --max-length 1024 \
    --batch-size 4 --lr 1e-3 --save-steps 5
$X train sft --model "$OUT/tiny" --data "$DATA/sft.jsonl" --out "$OUT/sft" --max-steps 10 --max-length 1024 \
    --batch-size 4 --lr 1e-3 --save-steps 5 --resume "$OUT/sft"

GPUS=$($PY -c 'import torch; print(torch.cuda.device_count())')
if [ "$GPUS" -ge 2 ]; then
    stage "SFT, LoRA, 2 processes on 2 GPUs (accelerate launch, DDP): batch 2 x 2 = the batch 4 above, 5 steps"
    $PY -m accelerate.commands.launch --config_file training/recipes/accelerate/ddp.yaml --num_processes 2 \
        "$X" train sft --model "$OUT/tiny" --data "$DATA/sft.jsonl" --out "$OUT/sft-2gpu" --max-steps 5 \
        --max-length 1024 --batch-size 2 --lr 1e-3 --save-steps 5
else
    stage "SFT on 2 GPUs: skipped, $GPUS GPU(s) here"
fi

stage "SFT, full, chat format, gradient checkpointing: 5 steps"
$X train sft --model "$OUT/tiny" --data "$DATA/sft.jsonl" --out "$OUT/sft-full" --full --format chat \
    --gradient-checkpointing --max-steps 5 --max-length 1024 --batch-size 4 --lr 1e-4

stage "export (merge the adapter)"
$X train export --checkpoint "$OUT/sft/adapter" --out "$OUT/export-sft" --summary "$OUT/sft/summary.json"

stage "GRPO stage 1: 3 steps"
$X train rl --stage 1 --model "$OUT/export-sft/merged" --data "$DATA/rl.jsonl" --out "$OUT/rl1" "${REWARD[@]}" \
    --max-steps 3 --num-generations 4 --batch-size 4 --grad-accum 1 --max-completion-length 32 --lr 1e-5
$X train export --checkpoint "$OUT/rl1/adapter" --out "$OUT/export" \
    --summary "$OUT/sft/summary.json" --summary "$OUT/rl1/summary.json"

stage "serve the exported folder"
$PY -m training.smoke serve "$OUT/export/merged" | tee "$OUT/serve.json"

stage "summary"
$PY - "$OUT" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
summary = {name: json.loads((out / name / "summary.json").read_text()) for name in ("sft", "sft-full", "rl1")}
if (out / "sft-2gpu" / "summary.json").is_file():  # 2+ GPUs: the same 5 first steps, on 2 processes
    summary["sft-2gpu"] = json.loads((out / "sft-2gpu" / "summary.json").read_text())
summary["serve"] = json.loads((out / "serve.json").read_text())
(out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
for name in ("sft", "sft-2gpu", "sft-full", "rl1"):
    if name not in summary:
        continue
    s = summary[name]
    keep = {k: s[k] for k in ("steps", "processes", "resumed_from", "device", "bf16", "seconds", "train_loss", "completion_loss_before",
                                        "completion_loss_after", "vllm", "mean_reward_per_step") if k in s}
    print(name, json.dumps(keep))
if "sft-2gpu" in summary:
    losses = {name: [round(e["loss"], 4) for e in summary[name]["log_history"] if "loss" in e][:5] for name in ("sft", "sft-2gpu")}
    print("first 5 losses, 1 process x batch 4 against 2 x 2 (bf16: close, not equal):", losses)
print("serve", summary["serve"]["served_by"], repr(summary["serve"]["reply"]))
PY
echo "gpu smoke: every stage ran in $SECONDS s (OUT: $OUT)"
