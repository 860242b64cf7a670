"""Code Jam: stdin/stdout problems, solve rates on the public and on the private tests.

Per problem the model writes n programs in one request: the app's own solve request
(``simulator.prompts.solve``, the public tests shown as examples; prefilled opening fence, stop at the
closing fence, ``solve.parse`` reads the reply). Each program runs in the sandbox
on every test file; it passes a test when its stdout matches token by token, floats within the
problem's tolerance (``simulator.compare.outputs_match``). A program solves the public (private) set
when it passes every public (private) test. Figures: ``public-pass@1``, ``public-pass@k``,
``private-pass@1``, ``private-pass@k``. A problem whose prompt the server refuses (too long for the
context window) counts as unsolved and is listed with its error. A record that cannot become a problem
is skipped and listed in ``extra.unconverted``; ``n`` counts the rest.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from simulator.benchmarks import from_codejam, read_jsonl
from simulator.compare import DEFAULT_TOLERANCE, outputs_match
from simulator.evaluation.harness import Context, TaskResult, convert_items
from simulator.evaluation.metrics import estimate_pass_at_k
from simulator.evaluation.requests import RequestRejected
from simulator.execution import run_many
from simulator.execution.program import Program
from simulator.problem import Problem
from simulator.prompts import solve

MAX_TOKENS = 1024  # longer than the app's 512: Code Jam programs are longer than MBPP's
TIMEOUT_S = 10.0


def load(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_jsonl(path, "Code Jam")]


def judge(problem: Problem, code: str | None) -> tuple[bool, bool]:
    """(solves the public tests, solves the private tests) for one program."""
    if not code:
        return False, False
    tests = list(problem.tests)
    programs = [Program(code=code, stdin=t.input, timeout_s=TIMEOUT_S) for t in tests]
    results = run_many(programs)
    tolerance = problem.float_tolerance if problem.float_tolerance is not None else DEFAULT_TOLERANCE
    passed = [
        r.status == "ok" and outputs_match(r.stdout, t.output, tolerance)
        for r, t in zip(results, tests, strict=True)
    ]
    public = [p for p, t in zip(passed, tests, strict=True) if t.public]
    private = [p for p, t in zip(passed, tests, strict=True) if not t.public]
    return all(public), bool(private) and all(private)


async def evaluate(items: list[dict[str, Any]], ctx: Context) -> TaskResult:
    params = {**ctx.sampling(max_tokens=MAX_TOKENS), **solve.request_ends()}

    async def one(entry: tuple[int, dict[str, Any], Problem]) -> dict[str, Any]:
        _, record, problem = entry
        item: dict[str, Any] = {"id": str(record["id"]), "name": record.get("name"), "error": None}
        try:
            reply = await ctx.requester.chat(item["id"], solve.messages(problem), params)
            texts = reply.texts
        except RequestRejected as exc:
            texts, item["error"] = [""] * ctx.settings.n, str(exc)[:300]
        codes = [solve.parse(text).code for text in texts]
        verdicts = [await asyncio.to_thread(judge, problem, code) for code in codes]
        item.update(
            n=len(codes),
            public_correct=sum(pub for pub, _ in verdicts),
            private_correct=sum(priv for _, priv in verdicts),
            candidates=[
                {"code": code, "public": pub, "private": priv}
                for code, (pub, priv) in zip(codes, verdicts, strict=True)
            ],
        )
        return item

    converted, unconverted = convert_items(items, from_codejam)
    records = await ctx.map(one, converted)
    metrics = {}
    for split in ("public", "private"):
        counts = [(r["n"], r[f"{split}_correct"]) for r in records]
        for k in ctx.ks():
            metrics[f"{split}-pass@{k}"] = estimate_pass_at_k(counts, k)
    answered = [c for r in records if r["error"] is None for c in r["candidates"]]
    return TaskResult(
        metrics=metrics,
        items=records,
        histogram=[r["public_correct"] for r in records],
        extra={"refused": sum(r["error"] is not None for r in records), "unconverted": unconverted},
        parse_failures={"solve": (sum(c["code"] is None for c in answered), len(answered))},
        n_items=len(records),
    )
