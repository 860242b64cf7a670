"""Which part of the solve request costs or keeps MBPP pass@1 (issue 12): prompt, prefill, stop.

    .venv/bin/python bench/solve_variants.py --data ../shared/benchmarks/mbpp/sanitized-dev.jsonl \\
        --limit 50 --n 4 --out out/i12/variants [--variants eval-v0,solve-v2,solve]

Sends only the solve requests (n samples per problem, temperature 0.8, top-p 0.95, 512 tokens, as
``execsim eval mbpp --n 4``) through the project's client behind a request cache
(``OUT/requests.jsonl``; keys as ``execsim eval``'s, so lines copied from an eval's cache are reused),
runs every candidate on all the problem's asserts (``simulator.evaluation.mbpp.passes``) and prints,
per variant: pass@1 over the n samples (bootstrap 95%), completion tokens per candidate, the share
cut by the token limit (Wilson), unparsed replies, and pass@1 minus the first variant's (paired
bootstrap over problems). Variants:

- ``eval-v0``        the prompt ``execsim eval mbpp`` sent before issue 12 (one user message: the MBPP
                     text, its first assert, "Write the Python function in one ```python code block."),
                     no prefill, no stop;
- ``eval-v0+stop``   the same prompt, the fence prefilled and stop at the closing fence;
- ``solve-v1+stop``  the app's solve prompt before solve-v3 (system message, the one-shot ``add``
                     example, the problem from ``from_mbpp``), no prefill, stop at the closing fence;
- ``solve-v2``       the same prefilled (solve-v2: solve-v1's wording, the fence prefilled, stop);
- ``plain+system``   no one-shot example: the solve system message, then eval-v0's user message built
                     from the problem's public tests and entry point, prefilled, stop;
- ``plain``          the same without the system message (the chat template's default one);
- ``solve``          the app's solve request as it is now (``solve.messages``: solve-v3, ``solve.STOP``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator import config  # noqa: E402
from simulator.benchmarks import from_mbpp, read_jsonl  # noqa: E402
from simulator.evaluation.cache import RequestCache  # noqa: E402
from simulator.evaluation.metrics import bootstrap, wilson  # noqa: E402
from simulator.evaluation.paired import paired_bootstrap  # noqa: E402
from simulator.evaluation.requests import Requester  # noqa: E402
from simulator.llm.client import ChatClient  # noqa: E402
from simulator.prompts import solve  # noqa: E402
from simulator.prompts.parsing import extract_code  # noqa: E402

PREFILL = {"role": "assistant", "content": solve.PREFILL}


def eval_v0(item: dict[str, Any]) -> list[dict[str, str]]:
    text = (
        f"{item['prompt']}\nYour code should pass this test:\n{item['test_list'][0]}\n"
        "Write the Python function in one ```python code block."
    )
    return [{"role": "user", "content": text}]


def solve_v1(item: dict[str, Any]) -> list[dict[str, str]]:
    """The app's call-problem solve prompt before solve-v3 (solve-v1's wording, kept here to rerun)."""
    problem = from_mbpp(item)
    examples = "\n".join(
        f"assert {problem.entry_point}({t.input}) == {t.output}" for t in problem.public_tests
    )
    user = (
        f"Solve this problem in Python 3. Write the function `{problem.entry_point}`.\n\n"
        f"Problem: {problem.statement.strip()}\n\nExamples:\n{examples}\n"
    )
    return [
        {"role": "system", "content": solve.SYSTEM},
        {"role": "user", "content": V1_EXAMPLE},
        {"role": "assistant", "content": V1_ANSWER},
        {"role": "user", "content": user},
    ]


V1_EXAMPLE = (
    "Solve this problem in Python 3. Write the function `add`.\n\n"
    "Problem: Return the sum of two numbers a and b.\n\n"
    "Examples:\nassert add(3, 4) == 7\n"
)
V1_ANSWER = "```python\ndef add(a, b):\n    return a + b\n```"


def variant(name: str, item: dict[str, Any]) -> tuple[list[dict[str, str]], list[str] | None, str]:
    """(messages, stop, prefill the parser adds) of one variant."""
    stop = list(solve.STOP)
    if name == "eval-v0":
        return eval_v0(item), None, ""
    if name == "eval-v0+stop":
        return [*eval_v0(item), PREFILL], stop, solve.PREFILL
    if name == "solve-v1+stop":
        return solve_v1(item), stop, ""
    if name == "solve-v2":
        return [*solve_v1(item), PREFILL], stop, solve.PREFILL
    problem = from_mbpp(item)
    if name in ("plain+system", "plain"):
        asserts = "\n".join(
            f"assert {problem.entry_point}({t.input}) == {t.output}" for t in problem.public_tests
        )
        text = (
            f"{item['prompt']}\nYour code should pass this test:\n{asserts}\n"
            f"Write the Python function `{problem.entry_point}` in one ```python code block."
        )
        system = [{"role": "system", "content": solve.SYSTEM}] if name == "plain+system" else []
        return [*system, {"role": "user", "content": text}, PREFILL], stop, solve.PREFILL
    if name == "solve":
        return solve.messages(problem), stop, solve.PREFILL
    raise SystemExit(f"unknown variant {name!r}")


async def measure(name: str, items: list[dict[str, Any]], requester: Requester, n: int) -> dict[str, Any]:
    from simulator.evaluation.mbpp import passes

    async def one(item: dict[str, Any]) -> dict[str, Any]:
        messages, stop, prefill = variant(name, item)
        params: dict[str, Any] = {"n": n, "temperature": 0.8, "max_tokens": 512, "top_p": 0.95}
        if stop:
            params["stop"] = stop
        reply = await requester.chat(str(item["task_id"]), messages, params)
        codes = [extract_code(text, prefill=prefill).code for text in reply.texts]
        passed = [
            bool(c) and await asyncio.to_thread(passes, item, c, list(item["test_list"])) for c in codes
        ]
        return {
            "id": str(item["task_id"]),
            "score": sum(passed) / len(passed),
            "tokens": reply.completion_tokens,
            "cut": sum(r == "length" for r in reply.finish_reasons),
            "unparsed": sum(c is None for c in codes),
            "replies": len(codes),
        }

    rows = await asyncio.gather(*(one(item) for item in items))
    return {"name": name, "rows": rows}


async def main_async(args: argparse.Namespace) -> int:
    items = [record for _, record in read_jsonl(args.data, "MBPP")][: args.limit]
    args.out.mkdir(parents=True, exist_ok=True)
    cache = RequestCache(args.out / "requests.jsonl")
    names = args.variants.split(",")
    async with ChatClient(config.model_url(), config.model_name(), concurrency=args.concurrency) as client:
        requester = Requester(client, cache)
        await requester.learn_model()
        try:
            results = [await measure(name, items, requester, args.n) for name in names]
        finally:
            cache.close()
    first = {r["id"]: r["score"] for r in results[0]["rows"]}
    summary = []
    for result in results:
        rows = result["rows"]
        replies = sum(r["replies"] for r in rows)
        cut = wilson(sum(r["cut"] for r in rows), replies)
        p1 = bootstrap([r["score"] for r in rows])
        diff = paired_bootstrap([(first[r["id"]], r["score"]) for r in rows])
        line = {
            "variant": result["name"],
            "problems": len(rows),
            "pass@1": [p1.value, p1.low, p1.high],
            "tokens_per_candidate": sum(r["tokens"] for r in rows) / replies,
            "cut": [cut.value, cut.low, cut.high],
            "unparsed": sum(r["unparsed"] for r in rows),
            "replies": replies,
            f"minus_{names[0]}": list(diff),
            "problems_with_a_pass": sum(r["score"] > 0 for r in rows),
        }
        summary.append(line)
        print(
            f"{line['variant']} n={len(rows)} pass@1={p1.value:.3f}[{p1.low:.3f},{p1.high:.3f}] "
            f"tokens/candidate={line['tokens_per_candidate']:.1f} "
            f"cut={cut.value:.3f}[{cut.low:.3f},{cut.high:.3f}] unparsed={line['unparsed']}/{replies} "
            f"minus-{names[0]}={diff[0]:+.3f}[{diff[1]:+.3f},{diff[2]:+.3f}]"
        )
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"requests sent={requester.sent} cached={requester.cached}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--variants", default="eval-v0,eval-v0+stop,solve-v1+stop,solve-v2")
    parser.add_argument("--out", type=Path, default=Path("out/solve-variants"))
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
