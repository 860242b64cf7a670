"""The default model served by vLLM in bf16 (its own dtype) and in float32 on this CPU, side by side
(``ModelServer`` picks float32 where the CPU has no bf16 instructions: ``serving_dtype``).

    .venv/bin/python bench/serve_dtype.py [--model .data/models/smollm2-135m-nlex] [--rounds 3]

Starts one server per dtype in turn (the other stopped, so they never share the two cores) and
measures, per round: decoding (one request, n=16 completions of 128 tokens, ``ignore_eos``) in
completion tokens per second, and prefill (a 500-token prompt, 1 token out; a new prompt each time,
so no prefix cache helps) in seconds. Prints each round, the medians and the float32/bf16 ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import httpx

from simulator.llm.server import ModelServer, cpu_has_bf16, serving_dtype


def decode_rate(client: httpx.Client, name: str) -> float:
    started = time.perf_counter()
    body = {"model": name, "prompt": "def fib(n):", "max_tokens": 128, "n": 16, "ignore_eos": True}
    usage = client.post("/completions", json=body).raise_for_status().json()["usage"]
    return usage["completion_tokens"] / (time.perf_counter() - started)


def prefill_seconds(client: httpx.Client, name: str, salt: int) -> float:
    prompt = f"{salt} " + " ".join(f"word{i}" for i in range(150))  # about 500 tokens
    started = time.perf_counter()
    client.post("/completions", json={"model": name, "prompt": prompt, "max_tokens": 1}).raise_for_status()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=Path(".data/models/smollm2-135m-nlex"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(
        f"CPU bf16 instructions: {cpu_has_bf16()}; the server's choice here: {serving_dtype() or 'the model'}"
    )
    results: dict[str, tuple[list[float], list[float]]] = {}
    for dtype in ("bfloat16", "float32"):
        server = ModelServer(args.model, model_name="bench", extra_args=["--dtype", dtype])
        with server, httpx.Client(base_url=server.url, timeout=600) as client:
            decode_rate(client, "bench")  # warm-up
            rates, prefills = [], []
            for round_ in range(args.rounds):
                rates.append(decode_rate(client, "bench"))
                prefills.append(prefill_seconds(client, "bench", round_))
                print(
                    f"{dtype:9} round {round_}: decode {rates[-1]:6.1f} tok/s, prefill {prefills[-1]:5.2f} s"
                )
        results[dtype] = (rates, prefills)
    (bf_rate, bf_pre), (fp_rate, fp_pre) = (
        [statistics.median(x) for x in results[d]] for d in ("bfloat16", "float32")
    )
    print(f"median decode: bf16 {bf_rate:.1f} tok/s, float32 {fp_rate:.1f} tok/s ({fp_rate / bf_rate:.2f}x)")
    print(
        f"median prefill of ~500 tokens: bf16 {bf_pre:.2f} s, float32 {fp_pre:.2f} s ({bf_pre / fp_pre:.2f}x)"
    )


if __name__ == "__main__":
    main()
