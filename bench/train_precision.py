"""A training step's forward and backward in fp32 and under bf16 autocast on this CPU, side by side
(``train sft --cpu-bf16``: fp32 weights, bf16 matmuls where the CPU has AMX or AVX512-BF16).

    .venv/bin/python bench/train_precision.py [--model .data/models/smollm2-135m-instruct] \
        [--batch 2] [--tokens 512] [--rounds 5] [--threads 2]

The two precisions alternate round by round in one process, so a busy machine slows both alike;
prints each round's seconds, the medians and the fp32/bf16 ratio, and the loss of one batch in each
precision (bf16 changes the numbers a little, not the result).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from transformers import AutoModelForCausalLM

from simulator.llm.server import cpu_has_bf16


def step(model: torch.nn.Module, batch: torch.Tensor, bf16: bool) -> tuple[float, float]:
    """(seconds, loss) of one forward and backward."""
    started = time.perf_counter()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        loss = model(input_ids=batch, labels=batch).loss
    loss.backward()
    model.zero_grad(set_to_none=True)
    return time.perf_counter() - started, loss.item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=".data/models/smollm2-135m-instruct")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"CPU bf16 instructions: {cpu_has_bf16()}")
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    batch = torch.randint(0, model.config.vocab_size, (args.batch, args.tokens))
    step(model, batch, False)  # warm-up: first-call allocations
    times: dict[bool, list[float]] = {False: [], True: []}
    losses: dict[bool, float] = {}
    for round_ in range(args.rounds):
        for bf16 in (False, True):
            seconds, losses[bf16] = step(model, batch, bf16)
            times[bf16].append(seconds)
        print(f"round {round_ + 1}: fp32 {times[False][-1]:.2f} s, bf16 {times[True][-1]:.2f} s")
    fp32, bf16 = statistics.median(times[False]), statistics.median(times[True])
    print(f"median of {args.rounds}: fp32 {fp32:.2f} s, bf16 {bf16:.2f} s, fp32/bf16 = {fp32 / bf16:.2f}x")
    print(f"loss: fp32 {losses[False]:.4f}, bf16 {losses[True]:.4f}")


if __name__ == "__main__":
    main()
