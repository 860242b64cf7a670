"""How long a user waits for a guided repair turn with 1 reply and with several (issue 12).

    .venv/bin/python bench/repair_wait.py --data ../shared/benchmarks/mbpp/sanitized-dev.jsonl \\
        --programs runs/s14/t08s0-f4/results.json [--limit 20] [--fixes 1,4]

Takes the programs a ``self-rlef`` run started from (``results.json``: each item's initial code) that
fail their public test for real, and runs the real pipeline on each as the user's own program
(``run(..., code=...)``: no solve request) with 1 repair turn, guided, temperature 0.8, once per
``--fixes`` value, the values alternating in order from one program to the next, against the model
server named by EXECSIM_MODEL_URL / EXECSIM_MODEL_NAME (nothing cached: the times are live). Prints,
per value: the repair stage's seconds (median and mean over the turns asked), the run's completion
tokens, and how many turns asked kept a fix; then each value's median over the first's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator import config  # noqa: E402
from simulator.benchmarks import from_mbpp, read_jsonl  # noqa: E402
from simulator.llm.client import ChatClient  # noqa: E402
from simulator.pipeline import RunSettings  # noqa: E402
from simulator.pipeline import run as pipeline_run  # noqa: E402


async def one(problem: Any, code: str, fixes: int, seed: int, client: ChatClient) -> dict[str, Any]:
    settings = RunSettings(k=1, turns=1, fixes=fixes, temperature=0.8, seed=seed, max_tokens=512)
    out: dict[str, Any] = {"fixes": fixes, "repair_s": None, "asked": False, "kept": False, "tokens": 0}
    async for event in pipeline_run(problem, settings, client, code=code):
        p = event.payload
        if event.type == "stage" and p["stage"] == "repair" and p["state"] == "finished":
            out["repair_s"] = p["seconds"]
        elif event.type == "repair_turn":
            out["asked"] = p["decided_by"] == "model"
        elif event.type == "run_finished":
            out["kept"] = p["code"] != code
            out["tokens"] = p["totals"]["tokens"]
    return out


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="MBPP jsonl the run was made on")
    parser.add_argument("--programs", type=Path, required=True, help="a self-rlef run's results.json")
    parser.add_argument("--limit", type=int, default=20, help="programs to repair (default 20)")
    parser.add_argument("--fixes", default="1,4", help="values to compare, the first the reference")
    args = parser.parse_args()
    values = [int(v) for v in args.fixes.split(",")]
    records = {str(r["task_id"]): r for _, r in read_jsonl(args.data, "MBPP")}
    items = json.loads(args.programs.read_text())["items"]
    chosen = [i for i in items if i["initial"]["code"] and i["initial"]["public"] is False][: args.limit]
    client = ChatClient(config.model_url(), config.model_name(), config.model_api_key(), timeout_s=600.0)
    results: list[dict[str, Any]] = []
    for n, item in enumerate(chosen):
        problem = from_mbpp(records[item["id"]])
        order = values if n % 2 == 0 else list(reversed(values))
        for fixes in order:
            results.append(await one(problem, item["initial"]["code"], fixes, n, client))
        print(f"{n + 1}/{len(chosen)} {item['id']}", file=sys.stderr)
    medians = {}
    for fixes in values:
        asked = [r for r in results if r["fixes"] == fixes and r["asked"]]
        seconds = [r["repair_s"] for r in asked]
        medians[fixes] = statistics.median(seconds) if seconds else float("nan")
        print(
            f"fixes={fixes} turns asked={len(asked)} repair s median={medians[fixes]:.2f} "
            f"mean={statistics.mean(seconds) if seconds else float('nan'):.2f} "
            f"tokens/run={statistics.mean(r['tokens'] for r in asked) if asked else 0:.0f} "
            f"kept={sum(r['kept'] for r in asked)}"
        )
    for fixes in values[1:]:
        print(
            f"median repair s, fixes={fixes} / fixes={values[0]}: {medians[fixes] / medians[values[0]]:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
