"""How often the model's prediction for a program that reads stdin is a copy: of the input itself, or
of the simulate prompt's own example output, instead of what the program prints.

    .venv/bin/python bench/stdin_copies.py --data ../shared/benchmarks/cruxeval/dev.jsonl [--limit 200]
        [--out runs/stdin-copies.jsonl]

Programs as a user types them for a stdin problem: each CRUXEval program with its arguments read from
standard input, one literal a line (``a1 = ast.literal_eval(input())`` ...), and ``print(f(a1, ...))``.
Each is simulated as "Simulate my code" does (``simulator.pipeline.single``: narrated, then run for
real) and as Best@k simulates a candidate on a stdin problem (``simulator.pipeline.run`` with the
program as the only candidate of a problem whose one public test is that input and the record's
output as printed: the answer at once, the default), greedy. Against the model server named by
EXECSIM_MODEL_URL / EXECSIM_MODEL_NAME. Prints, per way: predictions that match the real output, that
repeat the input, that are the prompt's example output (``simulate.copied``: the pipeline's
``simulation_done`` says which), and how many of the copies happen to be right.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.progress import Progress  # noqa: E402

from simulator import config  # noqa: E402
from simulator.benchmarks import read_jsonl  # noqa: E402
from simulator.execution.program import Program  # noqa: E402
from simulator.llm.client import ChatClient  # noqa: E402
from simulator.pipeline import RunSettings  # noqa: E402
from simulator.pipeline.run import run  # noqa: E402
from simulator.pipeline.single import simulate_program  # noqa: E402
from simulator.problem import Problem, TestCase  # noqa: E402


def programs(path: Path, limit: int | None) -> list[tuple[str, Program, str]]:
    """(id, program, what it prints) for CRUXEval records whose call has positional arguments only."""
    out = []
    for _, record in read_jsonl(path, "CRUXEval")[:limit]:
        call = ast.parse(f"f({record['input']})", mode="eval").body
        if not isinstance(call, ast.Call) or call.keywords or not call.args:
            continue
        names = [f"a{i + 1}" for i in range(len(call.args))]
        reads = "".join(f"{name} = ast.literal_eval(input())\n" for name in names)
        code = f"import ast\n\n{record['code'].rstrip()}\n\n\n{reads}print(f({', '.join(names)}))\n"
        stdin = "".join(ast.unparse(arg) + "\n" for arg in call.args)
        printed = f"{ast.literal_eval(record['output'])}\n"
        out.append((record["id"], Program(code=code, stdin=stdin), printed))
    return out


async def narrated(program: Program, client: ChatClient) -> dict[str, Any]:
    """As "Simulate my code" does it."""
    row: dict[str, Any] = {"narrate": True}
    async for event in simulate_program(program, RunSettings(), client):
        p = event.payload
        if event.type == "simulation_done":
            row["copied"] = p.get("copied")
        elif event.type == "run_finished":
            row.update(match=bool(p["match"]), predicted=p["predicted"])
        elif event.type == "run_failed":
            row.update(match=False, predicted=None, failed=p.get("message"))
    return row


async def at_once(program: Program, printed: str, client: ChatClient) -> dict[str, Any]:
    """As Best@k judges a candidate on a stdin problem."""
    problem = Problem(title="t", statement="s", kind="stdin", tests=(TestCase(program.stdin or "", printed),))
    row: dict[str, Any] = {"narrate": False, "match": False, "predicted": None}
    async for event in run(problem, RunSettings(k=1, turns=0), client, code=program.code):
        p = event.payload
        if event.type == "simulation_done":
            row.update(copied=p.get("copied"), predicted=p["predicted"])
        elif event.type == "verdict":
            row["match"] = bool(p["match"])
    return row


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    items = programs(args.data, args.limit)
    limit = asyncio.Semaphore(args.concurrency)
    rows: list[dict[str, Any]] = []
    async with ChatClient(config.model_url(), config.model_name()) as client:
        with Progress() as progress:
            task = progress.add_task("simulating", total=2 * len(items))

            async def run_one(ident: str, program: Program, printed: str, narrate: bool) -> None:
                async with limit:
                    row = await (narrated(program, client) if narrate else at_once(program, printed, client))
                rows.append({"id": ident, "stdin": program.stdin, **row})
                progress.advance(task)

            await asyncio.gather(*(run_one(*item, n) for item in items for n in (True, False)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = asyncio.run(main_async(args))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for narrate, way in ((True, "narrated (Simulate my code)"), (False, "answered at once (Best@k)")):
        mine = [r for r in rows if r["narrate"] is narrate]
        n = len(mine)
        counts = [f"right {sum(r['match'] for r in mine)} ({sum(r['match'] for r in mine) / n:.1%})"]
        for copy, what in (("input", "repeat the input"), ("example", "the prompt's example output")):
            these = [r for r in mine if r["copied"] == copy]
            counts.append(
                f"{what} {len(these)} ({len(these) / n:.1%}, {sum(r['match'] for r in these)} right)"
            )
        print(f"{way}, n={n}: " + "; ".join(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
