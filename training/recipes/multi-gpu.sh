#!/usr/bin/env bash
# One node with N GPUs: gpu-1.sh's stages with SFT and GRPO under `accelerate launch`, one training
# process per GPU. Synthesis, data and export run once, as in gpu-1.sh.
# MODEL: any HF causal LM folder. GPUS: how many to use (default: all that nvidia-smi lists).
# CONFIG: the accelerate config, training/recipes/accelerate/ddp.yaml by default (every GPU holds the
# model: LoRA, or full fine-tuning of models up to ~1.5B on 80 GB); fsdp.yaml or zero3.yaml shard
# weights, gradients and optimizer state for larger ones.
# Batches are per GPU: the global batch is --batch-size x --grad-accum x the training processes, so
# with 8 GPUs this recipe's SFT step sees 4 x 1 x 8 = 32 examples, gpu-1.sh's 8 x 2 = 16.
# GRPO rollouts: VLLM_MODE=colocate (default) samples with vLLM inside each training process;
# VLLM_MODE=server gives the last VLLM_GPUS GPUs (default 1) to `trl vllm-serve` (TRL's server mode:
# the trainer sends prompts over HTTP and the new weights after every step) and trains on the others.
# Each rank's reward sandbox gets cpu_count / GPUS workers (training.execution.rank_run_many).
# Usage: MODEL=/path/to/model [GPUS=8] [CONFIG=...] [VLLM_MODE=server] training/recipes/multi-gpu.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/multi-gpu}
: "${MODEL:?set MODEL to an HF model folder}"
GPUS=${GPUS:-$(nvidia-smi -L | wc -l)}
CONFIG=${CONFIG:-training/recipes/accelerate/ddp.yaml}
VLLM_MODE=${VLLM_MODE:-colocate}
VLLM_GPUS=${VLLM_GPUS:-1}
VLLM_PORT=${VLLM_PORT:-8000}
X=".venv/bin/execsim train"
launch() {  # launch N STAGE ARGS...: `execsim train STAGE ARGS` on N processes
    local n=$1
    shift
    .venv/bin/accelerate launch --config_file "$CONFIG" --num_processes "$n" \
        --main_process_port "${MAIN_PORT:-29500}" .venv/bin/execsim train "$@"
}
devices() { seq -s, "$1" "$2"; }  # devices FIRST LAST: "FIRST,...,LAST"

grpo() {  # grpo STAGE MODEL DATA OUT: GRPO with vLLM colocated, or served on the last VLLM_GPUS GPUs
    local stage=$1 model=$2 data=$3 out=$4
    local args=(rl --stage "$stage" --model "$model" --data "$data" --out "$out" --full --max-steps 500
        --num-generations 8 --batch-size 8 --grad-accum 8 --max-completion-length 2048 --lr 1e-6 --vllm on)
    if [ "$VLLM_MODE" != server ]; then
        launch "$GPUS" "${args[@]}"
        return
    fi
    local train=$((GPUS - VLLM_GPUS))
    mkdir -p "$out"
    CUDA_VISIBLE_DEVICES=$(devices "$train" $((GPUS - 1))) .venv/bin/trl vllm-serve --model "$model" \
        --tensor-parallel-size "$VLLM_GPUS" --port "$VLLM_PORT" >"$out/vllm-serve.log" 2>&1 &
    local server=$!
    until curl -sf "http://127.0.0.1:$VLLM_PORT/health" >/dev/null; do
        kill -0 "$server" || { echo "trl vllm-serve exited: see $out/vllm-serve.log" >&2; return 1; }
        sleep 5
    done
    CUDA_VISIBLE_DEVICES=$(devices 0 $((train - 1))) launch "$train" "${args[@]}" \
        --vllm-mode server --vllm-server-host 127.0.0.1 --vllm-server-port "$VLLM_PORT"
    kill "$server"
    wait "$server" || true
}

$X synth  --out "$OUT/synth" --programs 40000 --seed 0
$X data   --programs "$OUT/synth/programs.jsonl" --out "$OUT/data"
launch "$GPUS" sft --model "$MODEL" --data "$OUT/data/sft.jsonl" --out "$OUT/sft" --full --format chat \
    --max-steps 3000 --lr 1e-5 --max-length 4096 --batch-size 4 --grad-accum 1 --gradient-checkpointing \
    --save-steps 500
$X export --checkpoint "$OUT/sft/model" --out "$OUT/export-sft" --summary "$OUT/sft/summary.json" --card "$OUT/synth/card.json"
grpo 1 "$OUT/export-sft/merged" "$OUT/data/rl.jsonl" "$OUT/rl1"
$X export --checkpoint "$OUT/rl1/model" --out "$OUT/export-rl1" --summary "$OUT/rl1/summary.json"
grpo 2 "$OUT/export-rl1/merged" "$OUT/data/codegen.jsonl" "$OUT/rl2"
$X export --checkpoint "$OUT/rl2/model" --out "$OUT/export" --card "$OUT/synth/card.json" \
    --summary "$OUT/sft/summary.json" --summary "$OUT/rl1/summary.json" --summary "$OUT/rl2/summary.json"
