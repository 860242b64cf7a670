"""How often a narrated simulation ends without its answer, and what asking for it then gains.

    .venv/bin/python bench/narrated_answers.py --data ../shared/benchmarks/mbpp/sanitized-dev.jsonl \
        [--limit 80] [--out runs/narrated.jsonl]    (or a CRUXEval file)

What "Simulate my code" does with a pasted program (``simulator.pipeline.single``: one greedy,
narrated simulation, then the real, traced run), on programs a user would paste: each CRUXEval
program with its call, or each MBPP problem's reference solution with its first test's call, once as
a call (``f(...)``) and once as a script that prints it (stdin mode). Against the model server
named by EXECSIM_MODEL_URL / EXECSIM_MODEL_NAME.

A narration that ends before its answer gets the answer asked for (``forced``): at once, the narration
left out, when the token budget cut it (it loops); after it, the reply going on, when the model
stopped (docs/results.md, Issue 12, section 27). Each forced answer is also asked the other way
(greedy, as the pipeline's one simulation is), so one run compares, paired over the programs: a
stopped narration left without an answer (as before section 27), its answer asked at once, and its
answer asked after the narration. Prints, per mode and both pooled, the replies cut by the budget
and those stopped without an answer, how many of their answers are right each way, and the
predictions that match the real run each way, with paired bootstrap 95% intervals.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.progress import Progress  # noqa: E402

from simulator import config  # noqa: E402
from simulator.benchmarks import from_mbpp, read_jsonl  # noqa: E402
from simulator.evaluation.paired import paired_bootstrap  # noqa: E402
from simulator.execution.program import Program  # noqa: E402
from simulator.llm.client import ChatClient  # noqa: E402
from simulator.pipeline import RunSettings  # noqa: E402
from simulator.pipeline.matching import matches  # noqa: E402
from simulator.pipeline.single import simulate_program  # noqa: E402
from simulator.problem import ProblemError  # noqa: E402
from simulator.prompts import simulate  # noqa: E402
from simulator.prompts.parsing import parse_call_answer, parse_stdin_answer  # noqa: E402


def programs(path: Path, limit: int | None) -> list[tuple[str, str, Program]]:
    """(item id, mode, program) for the first ``limit`` items of a CRUXEval or MBPP file: each
    program with its call (CRUXEval's ``f(input)``, an MBPP problem's first test) as a call, and as
    a script that prints it."""
    calls = []
    for kind, record in read_jsonl(path, "CRUXEval", "MBPP")[:limit]:
        if kind == "CRUXEval":
            calls.append((record["id"], record["code"], f"f({record['input']})"))
            continue
        try:
            problem = from_mbpp(record)
        except ProblemError:
            continue
        call = f"{problem.entry_point}({problem.tests[0].input})"
        calls.append((problem.extra["id"], problem.extra["reference_code"], call))
    out = []
    for ident, code, call in calls:
        out.append((ident, "call", Program(code=code, call=call)))
        out.append((ident, "stdin", Program(code=f"{code.rstrip()}\n\nprint({call})\n", stdin="")))
    return out


async def one(program: Program, client: ChatClient) -> dict[str, Any]:
    row: dict[str, Any] = {}
    async for event in simulate_program(program, RunSettings(), client):
        p = event.payload
        if event.type == "simulation_done":
            row.update({key: p[key] for key in ("cut", "forced", "tokens", "parse_error", "text")})
        elif event.type == "run_finished":
            row.update(match=bool(p["match"]), predicted=p["predicted"], real=p["real_output"])
        elif event.type == "run_failed":
            row.update(match=False, failed=p.get("message"))
    return row


async def other_way(program: Program, row: dict[str, Any], client: ChatClient) -> bool:
    """A forced answer asked the way the pipeline did not: after the narration for a cut one, at once
    for a stopped one. Whether that answer matches the real run."""
    call = program.call
    kind = "call" if call is not None else "stdin"
    if call is not None:
        messages, stop = simulate.call_messages(program.code, call), simulate.CALL_STOP
    else:
        messages, stop = simulate.stdin_messages(program.code, program.stdin or ""), simulate.STDIN_STOP
    narration = row["text"]
    if row["cut"]:  # the pipeline asked at once: the narration is what came before that answer
        narration = narration.rsplit(simulate.forced_answer("", call, cut=True)[1], 1)[0]
    asked, _ = simulate.forced_answer(narration, call, cut=not row["cut"])  # the other way
    result = await client.chat(
        [*messages, {"role": "assistant", "content": asked}],
        temperature=0,
        max_tokens=simulate.ANSWER_TOKENS,
        stop=stop,
    )
    text = asked + result.choices[0].text
    parsed = parse_call_answer(text, call) if call is not None else parse_stdin_answer(text)
    return parsed.predicted is not None and matches(kind, parsed.predicted, row.get("real"))


def right(rows: list[dict[str, Any]], key: str) -> int:
    return sum(bool(r.get(key)) for r in rows)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="MBPP jsonl (shared/benchmarks)")
    parser.add_argument("--limit", type=int, default=None, help="first N problems")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--out", type=Path, help="write each program's row here (jsonl)")
    args = parser.parse_args(argv)

    todo = programs(args.data, args.limit)
    gate = asyncio.Semaphore(args.concurrency)
    rows: list[dict[str, Any]] = []
    async with ChatClient(config.model_url(), config.model_name()) as client:
        with Progress() as progress:
            bar = progress.add_task("simulating", total=len(todo))

            async def guarded(pid: str, mode: str, program: Program) -> None:
                async with gate:
                    row = await one(program, client)
                    if row.get("forced"):
                        row["other_match"] = await other_way(program, row, client)
                rows.append({"id": pid, "mode": mode, **row})
                progress.advance(bar)

            await asyncio.gather(*(guarded(*item) for item in todo))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))

    for mode in ("call", "stdin", "both"):
        of = sorted((r for r in rows if mode in (r["mode"], "both")), key=lambda r: (r["id"], r["mode"]))
        cut = [r for r in of if r.get("forced") and r.get("cut")]
        stopped = [r for r in of if r.get("forced") and not r.get("cut")]
        print(
            f"{mode}, n={len(of)}: cut by the budget {len(cut)} (right once asked: {right(cut, 'match')} "
            f"at once, {right(cut, 'other_match')} after the narration); stopped without an answer "
            f"{len(stopped)} (right once asked: {right(stopped, 'other_match')} at once, "
            f"{right(stopped, 'match')} after the narration)"
        )
        kept = [float(r["match"]) for r in of]  # the pipeline's way
        before = [0.0 if r in stopped else k for r, k in zip(of, kept, strict=True)]
        at_once = [float(r["other_match"]) if r in stopped else k for r, k in zip(of, kept, strict=True)]
        print(f"  matches the real run: a stopped narration left without an answer {sum(before):.0f}")
        for name, way in (("asked at once", at_once), ("asked after the narration", kept)):
            value, low, high = paired_bootstrap(list(zip(before, way, strict=True)))
            print(f"  ... its answer {name} {sum(way):.0f}: {value:+.3f} [{low:+.3f}, {high:+.3f}]")
        value, low, high = paired_bootstrap(list(zip(at_once, kept, strict=True)))
        print(f"  after the narration - at once: {value:+.3f} [{low:+.3f}, {high:+.3f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
