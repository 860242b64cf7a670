"""MBPP: solve rate (pass@1, pass@k) and Best@k picked three ways, and the simulation gap.

Per problem the model writes n candidates in one request (``n=``). Each candidate runs for real on all
the problem's asserts (ground truth). Best@k looks at the first k candidates and picks one:

- ``best@k-sim``     by simulation: the model predicts, for each assert ``assert <expr> == <expected>``,
                     the value of ``<expr>`` given the candidate's code (the CRUXEval-O prompt, greedy);
                     a prediction matches when it equals ``<expected>`` by Python value. Most matches
                     wins; ties are broken at random with a seeded RNG (seed + item index).
- ``best@k-oracle``  by real execution of the first assert only (the oracle of the papers).
- ``best@k-random``  at random.

Each figure is the fraction of problems whose picked candidate passes all asserts (Wilson interval);
the simulation gap is ``best@k-oracle - best@k-sim``. Asserts that are not ``==`` comparisons are not
simulated (they count as no match).
"""

from __future__ import annotations

import ast
import asyncio
import random
from pathlib import Path
from typing import Any

from simulator.benchmarks import read_jsonl
from simulator.evaluation import cruxeval
from simulator.evaluation.harness import Context, TaskResult
from simulator.evaluation.metrics import Estimate, estimate_pass_at_k, wilson
from simulator.evaluation.scoring import answer_found, extract_answer, prediction_passes, run_check
from simulator.prompts.parsing import extract_code as parse_code

SOLVE_MAX_TOKENS = 512


def load(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_jsonl(path, "MBPP")]


def solve_messages(item: dict[str, Any]) -> list[dict[str, str]]:
    text = (
        f"{item['prompt']}\nYour code should pass this test:\n{item['test_list'][0]}\n"
        "Write the Python function in one ```python code block."
    )
    return [{"role": "user", "content": text}]


def extract_code(completion: str) -> str:
    """The candidate's program as the app reads it (``simulator.prompts.parsing``); "" without one."""
    return parse_code(completion).code or ""


def split_assert(test: str) -> tuple[str, str] | None:
    """``assert <expr> == <expected>`` -> (expr, expected) source; None for any other shape."""
    try:
        node = ast.parse(test.strip()).body[0]
    except (SyntaxError, IndexError):
        return None
    if not isinstance(node, ast.Assert) or not isinstance(node.test, ast.Compare):
        return None
    compare = node.test
    if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Eq):
        return None
    return ast.unparse(compare.left), ast.unparse(compare.comparators[0])


def _prelude(item: dict[str, Any]) -> str:
    return "\n".join(item.get("test_imports") or [])


def passes(item: dict[str, Any], code: str, tests: list[str]) -> bool:
    return run_check(f"{_prelude(item)}\n{code}", tests, timeout_s=10.0)


def pick(scores: list[float], rng: random.Random) -> int:
    best = max(scores)
    return rng.choice([i for i, s in enumerate(scores) if s == best])


async def evaluate(items: list[dict[str, Any]], ctx: Context) -> TaskResult:
    k = ctx.settings.k
    solve_params = ctx.sampling(max_tokens=SOLVE_MAX_TOKENS)
    sim_params = ctx.sampling(max_tokens=cruxeval.MAX_TOKENS[ctx.settings.prompt], n=1)
    sim_params.update(temperature=0.0, stop=["[/ANSWER]"])
    sim_params.pop("top_p", None)
    sim_params.pop("seed", None)

    async def one(indexed: tuple[int, dict[str, Any]]) -> dict[str, Any]:
        index, item = indexed
        item_id = str(item["task_id"])
        reply = await ctx.requester.chat(item_id, solve_messages(item), solve_params)
        codes = [extract_code(text) for text in reply.texts]
        fenced = [bool(code) for code in codes]
        tests = list(item["test_list"])
        real_all = [await asyncio.to_thread(passes, item, code, tests) for code in codes]
        real_first = [await asyncio.to_thread(passes, item, code, tests[:1]) for code in codes[:k]]

        sim_parsed: list[bool] = []

        async def simulated_match(c: int, t: int, code: str, expr: str, expected: str) -> bool:
            messages = cruxeval.messages(code, expr, ctx.settings.prompt)
            sim = await ctx.requester.chat(f"{item_id}/c{c}/t{t}", messages, sim_params)
            program = f"{_prelude(item)}\n{code}"
            answer = extract_answer(sim.texts[0])
            sim_parsed.append(answer_found(sim.texts[0]))
            return await asyncio.to_thread(prediction_passes, program, expr, expected, answer)

        jobs = [
            (c, simulated_match(c, t, code, *parts))
            for c, code in enumerate(codes[:k])
            for t, test in enumerate(tests)
            if (parts := split_assert(test)) is not None
        ]
        matched = await asyncio.gather(*(job for _, job in jobs))  # all of an item's simulations at once
        sim_scores = [0] * len(codes[:k])
        for (c, _), match in zip(jobs, matched, strict=True):
            sim_scores[c] += int(match)
        rng = random.Random(ctx.settings.seed + index)
        chosen = {
            "sim": pick(sim_scores, rng),
            "oracle": pick([float(x) for x in real_first], rng),
            "random": rng.randrange(len(codes[:k])),
        }
        return {
            "id": item_id,
            "n": len(codes),
            "correct": sum(real_all),
            "candidates": [
                {"code": code, "passed": passed, "sim_matches": sim_scores[i] if i < k else None}
                for i, (code, passed) in enumerate(zip(codes, real_all, strict=True))
            ],
            "chosen": chosen,
            "chosen_passed": {way: real_all[i] for way, i in chosen.items()},
            "solve_parsed": fenced,
            "simulations": len(sim_parsed),
            "simulations_unparsed": sim_parsed.count(False),
        }

    records = await ctx.map(one, list(enumerate(items)))
    counts = [(r["n"], r["correct"]) for r in records]
    metrics: dict[str, Estimate] = {f"pass@{kk}": estimate_pass_at_k(counts, kk) for kk in ctx.ks()}
    for way in ("sim", "oracle", "random"):
        metrics[f"best@{k}-{way}"] = wilson(sum(r["chosen_passed"][way] for r in records), len(records))
    gap = metrics[f"best@{k}-oracle"].value - metrics[f"best@{k}-sim"].value
    solves = [ok for r in records for ok in r["solve_parsed"]]
    return TaskResult(
        metrics=metrics,
        items=records,
        histogram=[c for _, c in counts],
        extra={"simulation_gap": gap},
        parse_failures={
            "solve": (solves.count(False), len(solves)),
            "simulate": (
                sum(r["simulations_unparsed"] for r in records),
                sum(r["simulations"] for r in records),
            ),
        },
    )
