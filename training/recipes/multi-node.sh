#!/usr/bin/env bash
# Several nodes without a scheduler: run this on every node, the same command but for NODE_RANK, and
# each starts `accelerate launch` with one training process per GPU (torchrun underneath, static
# rendezvous at MAIN_IP:MAIN_PORT, the node with NODE_RANK=0). The arguments are `execsim train`'s:
# a stage and its flags, the same on every node.
#   node 0:  NODE_RANK=0 NUM_NODES=2 MAIN_IP=10.0.0.1 training/recipes/multi-node.sh sft --model M ...
#   node 1:  NODE_RANK=1 NUM_NODES=2 MAIN_IP=10.0.0.1 training/recipes/multi-node.sh sft --model M ...
# CONFIG: an accelerate config (default training/recipes/accelerate/ddp.yaml; fsdp.yaml or zero3.yaml
# shard the model); GPUS_PER_NODE (default: the GPUs nvidia-smi lists; 1 on a machine without one);
# MAIN_PORT (29500). --data, --model and --out must be the same files on every node (a shared file
# system): the ranks refuse to train on different rows, and only rank 0 (on node 0) writes the run's
# adapter or model, summary.json and run history, while every node writes its part of a checkpoint.
# The global batch is --batch-size x --grad-accum x NUM_NODES x GPUS_PER_NODE.
# GRPO with rollouts on a vLLM server: start `trl vllm-serve --model M --port 8000` on a node of its
# own (or GPUs no training process uses), then pass `rl ... --vllm on --vllm-mode server
# --vllm-server-host HOST --vllm-server-port 8000` here (slurm.sbatch does both).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${NODE_RANK:?set NODE_RANK: 0 on the main node, 1..NUM_NODES-1 on the others}"
: "${NUM_NODES:?set NUM_NODES}"
: "${MAIN_IP:?set MAIN_IP to the address of the node with NODE_RANK=0}"
CONFIG=${CONFIG:-training/recipes/accelerate/ddp.yaml}
if [ -z "${GPUS_PER_NODE:-}" ]; then
    GPUS_PER_NODE=$(nvidia-smi -L 2>/dev/null | wc -l)
    [ "$GPUS_PER_NODE" -gt 0 ] || GPUS_PER_NODE=1
fi
PY=${PYTHON:-.venv/bin/python}
X=${EXECSIM:-.venv/bin/execsim}

exec "$PY" -m accelerate.commands.launch --config_file "$CONFIG" \
    --num_machines "$NUM_NODES" --machine_rank "$NODE_RANK" \
    --num_processes "$((NUM_NODES * GPUS_PER_NODE))" \
    --main_process_ip "$MAIN_IP" --main_process_port "${MAIN_PORT:-29500}" \
    --rdzv_backend static --same_network \
    "$X" train "$@"
