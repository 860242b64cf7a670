"""What stopping looping code replies saves a user: Solve runs with ``solve.LOOP_STOP`` and without.

    .venv/bin/python bench/loop_stop.py --data ../shared/benchmarks/mbpp/sanitized-dev.jsonl \\
        [--limit 24] [--turns 1]
    .venv/bin/python bench/loop_stop.py --replies runs/x/requests.jsonl --tokenizer .data/models/NAME

Runs the real pipeline, as the Solve form does (k=4, temperature 0.8, answers at once; ``--turns``
guided repair turns, 0 by default as in the form), on the first ``--limit`` MBPP problems, twice
each: with the solve and fix requests asking vLLM to stop a looping reply (the app's default) and
without, the two in alternating order from one problem to the next, against the model server named
by EXECSIM_MODEL_URL / EXECSIM_MODEL_NAME (nothing cached: the times are live). Prints, per setting:
the run's and the solve stage's seconds (median and mean), the repair stage's when asked, the
completion tokens per run, the candidates with a program, the replies cut by the token budget and
those stopped looping; then the medians' ratios, without over with.

``--replies``: offline, which code replies of an evaluation's request cache (a ``self-rlef`` or
``mbpp`` run made without the stop) ``LOOP_STOP`` would have stopped, by vLLM's own check on their
tokens: per finish reason, how many and the tokens saved, and the stopped replies that had ended by
themselves, to read (a stop there cut a reply that was not looping to the budget).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
from simulator.problem import ProblemError  # noqa: E402
from simulator.prompts import solve  # noqa: E402

SETTINGS = ("with", "without")
LOOP_STOP = dict(solve.LOOP_STOP)


async def one(problem: Any, turns: int, setting: str, seed: int, client: ChatClient) -> dict[str, Any]:
    solve.LOOP_STOP = LOOP_STOP if setting == "with" else {}  # read by the pipeline at each request
    settings = RunSettings(k=4, turns=turns, temperature=0.8, seed=seed)
    out: dict[str, Any] = {"setting": setting, "repair_s": None, "programs": 0, "cut": 0, "looped": 0}
    async for event in pipeline_run(problem, settings, client):
        p = event.payload
        if event.type == "stage" and p["state"] == "finished" and p["stage"] in ("solve", "repair"):
            out[f"{p['stage']}_s"] = p["seconds"]
        elif event.type == "candidate_done":
            out["programs"] += p["code"] is not None
            out["cut"] += p["finish_reason"] == "length"
            out["looped"] += p["finish_reason"] == "repetition"
        elif event.type in ("run_finished", "run_failed"):
            out["run_s"] = (p.get("totals") or {}).get("seconds")
            out["tokens"] = (p.get("totals") or {}).get("tokens", 0)
            out["failed"] = event.type == "run_failed"
    return out


def summary(values: list[float]) -> str:
    if not values:
        return "-"
    return f"median {statistics.median(values):.2f} mean {statistics.mean(values):.2f}"


def offline(requests: Path, tokenizer: Path) -> int:
    from transformers import AutoTokenizer
    from vllm.sampling_params import RepetitionDetectionParams
    from vllm.v1.core.sched.utils import check_sequence_repetition

    encode = AutoTokenizer.from_pretrained(tokenizer)
    params = RepetitionDetectionParams(**LOOP_STOP)
    counts: dict[str, list[int]] = {}  # finish reason -> [replies, stopped, tokens saved]
    ended_by_themselves = []
    for line in requests.read_text().splitlines():
        row = json.loads(line)
        for text, reason in zip(row["texts"], row["finish_reasons"], strict=True):
            if solve.parse(text).code is None and "def " not in text:
                continue  # not a code reply (a simulation)
            ids = encode(text, add_special_tokens=False)["input_ids"]
            at = next((n for n in range(1, len(ids) + 1) if check_sequence_repetition(ids[:n], params)), None)
            tally = counts.setdefault(reason, [0, 0, 0])
            tally[0] += 1
            if at is not None:
                tally[1] += 1
                tally[2] += len(ids) - at
                if reason != "length":
                    ended_by_themselves.append(text)
    for reason, (replies, stopped, saved) in sorted(counts.items()):
        print(
            f"finish_reason={reason}: code replies {replies}, stopped by LOOP_STOP {stopped}, "
            f"tokens saved {saved}"
        )
    for text in ended_by_themselves:
        print("--- stopped, though it ended by itself:\n" + text[-400:])
    return 0


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="MBPP jsonl (a dev split)")
    parser.add_argument("--limit", type=int, default=24, help="problems (default 24)")
    parser.add_argument("--turns", type=int, default=0, help="guided repair turns (default 0)")
    parser.add_argument("--replies", type=Path, help="offline: an evaluation's requests.jsonl")
    parser.add_argument("--tokenizer", type=Path, help="with --replies: the served model's folder")
    args = parser.parse_args()
    if args.replies:
        return offline(args.replies, args.tokenizer)
    if args.data is None:
        parser.error("--data is required (or --replies for the offline check)")
    problems = []
    for _, record in read_jsonl(args.data, "MBPP"):
        with contextlib.suppress(ProblemError):  # an assert the app cannot take as a test
            problems.append(from_mbpp(record))
    problems = problems[: args.limit]
    client = ChatClient(config.model_url(), config.model_name(), config.model_api_key(), timeout_s=600.0)
    results: list[dict[str, Any]] = []
    for n, problem in enumerate(problems):
        for setting in SETTINGS if n % 2 == 0 else reversed(SETTINGS):
            results.append(await one(problem, args.turns, setting, n, client))
        print(f"{n + 1}/{len(problems)}", file=sys.stderr)
    medians: dict[tuple[str, str], float] = {}
    for setting in SETTINGS:
        runs = [r for r in results if r["setting"] == setting and not r.get("failed")]
        line = [f"{setting} loop stop: runs={len(runs)}"]
        for stage in ("run", "solve", "repair"):
            seconds = [r[f"{stage}_s"] for r in runs if r.get(f"{stage}_s") is not None]
            if seconds:
                medians[setting, stage] = statistics.median(seconds)
                line.append(f"{stage} s {summary(seconds)}")
        line.append(f"tokens/run {statistics.mean(r['tokens'] for r in runs):.0f}")
        replies = 4 * len(runs)
        line.append(f"candidates with a program {sum(r['programs'] for r in runs)}/{replies}")
        line.append(f"cut {sum(r['cut'] for r in runs)} stopped looping {sum(r['looped'] for r in runs)}")
        print(", ".join(line))
    for stage in ("run", "solve", "repair"):
        if ("with", stage) in medians and ("without", stage) in medians:
            ratio = medians["without", stage] / medians["with", stage]
            print(f"median {stage} s, without / with: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
