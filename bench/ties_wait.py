"""What breaking ties by likelihood costs a user: Solve runs with ``ties`` random and likelihood.

    .venv/bin/python bench/ties_wait.py --data ../shared/benchmarks/mbpp/sanitized-dev.jsonl [--limit 16]

Runs the real pipeline as the Solve form does (k=4, temperature 0.8, answers at once, no repair)
on the first ``--limit`` MBPP problems, twice each, ties broken at random and by the likelihood of
the expected outputs, the two in alternating order from one problem to the next, against the model
server named by EXECSIM_MODEL_URL / EXECSIM_MODEL_NAME (nothing cached: the times are live). Prints,
per setting, the select stage's and the whole run's seconds (median and mean), and how many runs
ended in a tie that was scored; then what the likelihood adds to the medians (the select stage
takes no time when ties are broken at random, so a ratio would mean nothing there).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator import config  # noqa: E402
from simulator.benchmarks import from_mbpp, read_jsonl  # noqa: E402
from simulator.llm.client import ChatClient  # noqa: E402
from simulator.pipeline import RunSettings  # noqa: E402
from simulator.pipeline import run as pipeline_run  # noqa: E402

WAYS = ("random", "likelihood")


async def one(problem: Any, ties: str, seed: int, client: ChatClient) -> dict[str, Any]:
    settings = RunSettings(ties=ties, seed=seed)
    out: dict[str, Any] = {"ties": ties, "select_s": None, "run_s": None, "scored": False}
    began = time.monotonic()
    select_began = None
    async for event in pipeline_run(problem, settings, client):
        p = event.payload
        if event.type == "stage" and p["stage"] == "select":
            if p["state"] == "started":
                select_began = time.monotonic()
            elif select_began is not None:
                out["select_s"] = time.monotonic() - select_began
        if event.type == "selected":
            out["scored"] = "likelihoods" in p
        if event.is_final:
            out["run_s"] = time.monotonic() - began
            out["final"] = event.type
    return out


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):6.2f} s, mean {statistics.mean(values):6.2f} s"


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="MBPP jsonl (sanitized dev split)")
    parser.add_argument("--limit", type=int, default=16, help="problems (default %(default)s)")
    args = parser.parse_args(argv)
    problems = []
    for _, record in read_jsonl(args.data, "MBPP"):
        try:
            problems.append(from_mbpp(record))
        except ValueError:
            continue
        if len(problems) == args.limit:
            break
    results: list[dict[str, Any]] = []
    async with ChatClient(config.model_url(), config.model_name()) as client:
        for index, problem in enumerate(problems):
            order = WAYS if index % 2 == 0 else WAYS[::-1]
            for ties in order:
                result = await one(problem, ties, index, client)
                results.append(result)
                print(f"{index + 1}/{len(problems)} {ties:<10} {result}", file=sys.stderr)
    medians = {}
    for ties in WAYS:
        mine = [r for r in results if r["ties"] == ties and r["run_s"] is not None]
        selects = [r["select_s"] for r in mine if r["select_s"] is not None]
        runs = [r["run_s"] for r in mine]
        medians[ties] = (statistics.median(selects), statistics.median(runs))
        scored = sum(r["scored"] for r in mine)
        print(f"{ties:<10} select {summary(selects)}; run {summary(runs)}; {scored}/{len(mine)} ties scored")
    (select_random, run_random), (select_likely, run_likely) = medians["random"], medians["likelihood"]
    print(
        f"likelihood - random, medians: select {select_likely - select_random:+.2f} s; "
        f"run {run_likely - run_random:+.2f} s ({run_likely / run_random:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
