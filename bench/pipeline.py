"""Benchmark: the pipeline's requests all concurrent vs one at a time, against a real model server.

    .venv/bin/python bench/pipeline.py [--url URL] [--model NAME] [--k 4] [--repeats 1]

    execsim model serve --no-eager &                                   # docs/results.md#serving
    .venv/bin/python bench/pipeline.py --url http://127.0.0.1:8765/v1

One call problem with 3 public tests; the pipeline (``simulator.pipeline.run``, ``RunSettings``'
defaults otherwise) solves it with k=4 candidates (one request, ``n=4``) and simulates every candidate
on every test (12 requests), no repair turns. Mode ``concurrent`` lets all 12 simulations be in flight
at once (``concurrency=16``); mode ``sequential`` sends one request at a time (``concurrency=1`` in the
pipeline and the client). Both use the same seed, so they pick alike (the model's replies are sampled
afresh). Prints wall time, completion tokens, tokens/s and the speed-up; the target is at least 3x on
the vLLM CPU server (it batches concurrent requests).

The server is ``--url``/``--model``, else EXECSIM_MODEL_URL / EXECSIM_MODEL_NAME (default: ``execsim
model serve``'s). Any OpenAI-compatible server will do: tests/bench/test_pipeline.py runs the script
against ``simulator.llm.testing.FakeModelServer`` (a scripted double, so its figures mean nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator import config  # noqa: E402
from simulator.llm.client import ChatClient  # noqa: E402
from simulator.pipeline.run import run  # noqa: E402
from simulator.pipeline.settings import RunSettings  # noqa: E402
from simulator.problem import Problem  # noqa: E402

PROBLEM = Problem.from_dict(
    {
        "title": "Sum of squares",
        "statement": "Write a function `sum_squares(xs)` that returns the sum of the squares of the "
        "numbers in the list `xs`.",
        "kind": "call",
        "entry_point": "sum_squares",
        "tests": [
            {"input": "[1, 2, 3]", "output": "14", "public": True},
            {"input": "[]", "output": "0", "public": True},
            {"input": "[-2, 5]", "output": "29", "public": True},
        ],
    }
)


async def once(url: str, model: str, k: int, concurrency: int) -> dict[str, Any]:
    settings = RunSettings(k=k, turns=0, seed=1, max_tokens=256, concurrency=concurrency)
    started = time.monotonic()
    final: dict[str, Any] = {}
    async with ChatClient(url, model, concurrency=concurrency, timeout_s=600) as client:
        async for event in run(PROBLEM, settings, client):
            if event.is_final:
                final = {"type": event.type, **event.payload}
    seconds = time.monotonic() - started
    if final.get("type") != "run_finished":
        raise SystemExit(f"the run did not finish: {json.dumps(final)[:500]}")
    totals = final["totals"]
    tokens = int(totals.get("tokens") or 0)
    return {
        "seconds": round(seconds, 2),
        "tokens": tokens,
        "requests": totals.get("requests"),
        "tokens_per_s": round(tokens / seconds, 1),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=config.model_url())
    parser.add_argument("--model", default=config.model_name())
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    results: dict[str, list[dict[str, Any]]] = {"concurrent": [], "sequential": []}
    await once(args.url, args.model, args.k, 16)  # warm the server's caches
    for _ in range(args.repeats):
        for mode, concurrency in (("sequential", 1), ("concurrent", 16)):
            result = await once(args.url, args.model, args.k, concurrency)
            results[mode].append(result)
            print(f"{mode:10s} {json.dumps(result)}", flush=True)
    seq = sum(r["seconds"] for r in results["sequential"])
    con = sum(r["seconds"] for r in results["concurrent"])
    # Per-token speed-up (the two modes sample different lengths; tokens/s is the fair comparison).
    seq_tps = sum(r["tokens"] for r in results["sequential"]) / seq
    con_tps = sum(r["tokens"] for r in results["concurrent"]) / con
    print("\n| mode | wall (s) | completion tokens | tokens/s |\n|---|---|---|---|")
    for mode, label in (("sequential", "one request at a time"), ("concurrent", "all concurrent")):
        wall = sum(r["seconds"] for r in results[mode])
        tokens = sum(r["tokens"] for r in results[mode])
        print(f"| {label} | {wall:.1f} | {tokens} | {tokens / wall:.1f} |")
    print(
        f"\npipeline k={args.k} tests=3 sequential_s={seq:.1f} concurrent_s={con:.1f} "
        f"wall_speedup={seq / con:.2f} sequential_tok_s={seq_tps:.1f} concurrent_tok_s={con_tps:.1f} "
        f"throughput_speedup={con_tps / seq_tps:.2f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
