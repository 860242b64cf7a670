"""MBPP: solve rate (pass@1, pass@k), Best@k by simulation against the expected random pick, and the
cost of the candidates.

Per problem the model writes n candidates in one request: the app's own solve request
(``simulator.prompts.solve`` on the problem ``simulator.benchmarks.from_mbpp`` makes of the record,
the first assert public; prefilled opening fence, stop at the closing fence, 512 tokens, as the
pipeline sends it). Each candidate runs for real on all the problem's asserts (ground truth). Best@k
looks at the first k candidates and picks one from what is known: the public test. With n a multiple
of k, each disjoint group of k candidates is one Best@k, and the expectations are averaged over the
groups (n=8, k=4: two). Every pick goes through ``selection.best_of``:

- ``best@k-sim``          the app's pick: for each public test ``assert f(args) == expected`` the model
                          predicts ``f(args)`` given the candidate's code (one greedy simulation, with
                          ``--prompt``'s request); a prediction matches ``expected`` by the app's rule
                          (``pipeline.matching.problem_matches``), without running anything. Most
                          matches wins; a tie never goes to a program that cannot pass
                          (``pipeline.static.cannot_pass``), then goes to the program written most
                          often among the k (``source.agreement_counts``), then to a seeded draw
                          (seed + item index): one draw per problem (Wilson).
- ``best@k-sim-expected`` the same pick's expected correctness over the draw (``Selection.expected``):
                          the figure without the draw's noise (bootstrap).
- ``best@k-paper``        the paper's rule: matches alone, ties at random among all k; expected over
                          the draw (bootstrap).
- ``best@k-oracle``       by real execution of the public test (the oracle of the papers), ties at
                          random: one draw (Wilson).
- ``best@k-random``       the *expected* random pick: the mean correctness of the candidates in the
                          groups (pass@1 over them), not one draw (bootstrap).

``extra.paired`` holds the app's, the paper's and the oracle's expected pick minus the expected random
pick, per problem, with a paired bootstrap 95% interval (``paired.paired_bootstrap``): what selection
gains over picking blindly. ``extra.cannot_pass`` counts the candidates the static check judged, and
those of them that really passed (0 unless the check is wrong); ``extra.sim_matched_by_public_outcome``
how often the simulation matched among the candidates that really pass the public test and among those
that fail it: the signal selection has to work with. The simulation gap is ``best@k-oracle -
best@k-sim``. ``extra.solve`` reports completion tokens per candidate and the share of replies cut by
the token limit. With ``--candidates RESULTS`` no solve request is sent: the candidates (and their
solve figures) are those of an earlier run's results.json, so two models judging the same programs
compare their judges alone, paired by problem (``execsim eval-diff A B --measure sim``), without the
noise of fresh samples. A record that cannot become a problem (no ``assert f(args) == value``) is
skipped and listed in ``extra.unconverted``.
"""

from __future__ import annotations

import ast
import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulator.benchmarks import from_mbpp, read_jsonl
from simulator.evaluation import cruxeval
from simulator.evaluation.harness import Context, TaskResult, convert_items
from simulator.evaluation.metrics import Estimate, bootstrap, estimate_pass_at_k, wilson
from simulator.evaluation.paired import paired_bootstrap
from simulator.evaluation.scoring import answer_found, extract_answer, run_check
from simulator.pipeline.matching import problem_matches
from simulator.pipeline.selection import Selection, best_of
from simulator.pipeline.settings import RunSettings
from simulator.pipeline.static import cannot_pass
from simulator.problem import Problem
from simulator.prompts import solve
from simulator.source import agreement_counts, first_same, parse_python

SOLVE_MAX_TOKENS = RunSettings.max_tokens  # what the app's solve request allows


def load(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_jsonl(path, "MBPP")]


def solve_params(ctx: Context) -> dict[str, Any]:
    """The solve request's sampling parameters: the harness's, the app's budget and where a code
    reply ends."""
    return {**ctx.sampling(max_tokens=SOLVE_MAX_TOKENS), **solve.request_ends()}


def extract_code(completion: str) -> str:
    """The candidate's program as the app reads it (``solve.parse``); "" without one."""
    return solve.parse(completion).code or ""


def split_assert(test: str) -> tuple[str, str] | None:
    """``assert <expr> == <expected>`` -> (expr, expected) source; None for any other shape."""
    try:
        node = parse_python(test.strip()).body[0]
    except (SyntaxError, IndexError):
        return None
    if not isinstance(node, ast.Assert) or not isinstance(node.test, ast.Compare):
        return None
    compare = node.test
    if len(compare.ops) != 1 or not isinstance(compare.ops[0], ast.Eq):
        return None
    return ast.unparse(compare.left), ast.unparse(compare.comparators[0])


def with_imports(item: dict[str, Any], code: str) -> str:
    """``code`` as the MBPP item's tests run it: after the item's ``test_imports`` (a candidate may
    use ``math`` without importing it, as the reference solution's tests allow)."""
    prelude = "\n".join(item.get("test_imports") or [])
    return f"{prelude}\n{code}" if prelude else code


def passes(item: dict[str, Any], code: str, tests: list[str]) -> bool:
    return run_check(with_imports(item, code), tests, timeout_s=10.0)


def public_asserts(problem: Problem) -> list[tuple[str, str]]:
    """(expression, expected) of each public test: what selection may look at."""
    return [(f"{problem.entry_point}({t.input})", t.output) for t in problem.public_tests]


@dataclass(frozen=True)
class Solved:
    """An item's candidates and what writing them cost: from the solve reply, or (``--candidates``)
    from an earlier run's record of it, so that two judges can be compared on the same programs."""

    codes: list[str]
    tokens: int
    cut: int  # replies that ended at the token limit
    looped: int  # replies stopped for repeating themselves

    @classmethod
    def from_reply(cls, reply: Any) -> Solved:
        codes = [extract_code(text) for text in reply.texts]
        finish = reply.finish_reasons or [None] * len(codes)
        cut = sum(reason == "length" for reason in finish)
        return cls(codes, reply.completion_tokens, cut, sum(reason == "repetition" for reason in finish))


def given_candidates(path: Path) -> dict[str, Solved]:
    """Item id -> its candidates, from an earlier ``eval mbpp`` run's results.json; ValueError when
    the file is not one."""
    record = json.loads(Path(path).read_text())
    if record.get("task") != "mbpp":
        raise ValueError(f"{path} is not an eval mbpp results.json (task {record.get('task')!r})")
    return {
        str(r["id"]): Solved(
            [c["code"] for c in r["candidates"]], r["solve_tokens"], r["solve_cut"], r["solve_looped"]
        )
        for r in record["items"]
    }


def _matched_by_outcome(records: list[dict[str, Any]]) -> dict[str, list[int]]:
    """How often the simulation matched the public test, among the simulated candidates the check
    left that really pass it and that really fail it: ``{"pass": [matched, n], "fail": [matched, n]}``,
    the signal selection has to work with."""
    counts = {"pass": [0, 0], "fail": [0, 0]}
    for record in records:
        for c in record["candidates"]:
            if c["public_passed"] is None or not c["code"] or c["cannot_pass"]:
                continue
            cell = counts["pass" if c["public_passed"] else "fail"]
            cell[0] += c["sim_matches"] > 0
            cell[1] += 1
    return counts


WAYS = ("sim", "paper", "oracle")  # the picks compared with the expected random one


def picks(
    group: Sequence[int],
    codes: Sequence[str],
    matches: Sequence[int],
    checked: Sequence[str | None],
    agreement: Sequence[int],
    real_public: Sequence[bool],
    rng: random.Random,
) -> dict[str, Selection]:
    """Each way's pick among one group of k candidates (``WAYS``), through ``selection.best_of``:
    ``sim`` as the app picks (candidates with a program, a known failure never while a tied one may
    pass, then agreement), ``paper`` by matches alone, ``oracle`` by the real public test."""
    written = [i for i in group if codes[i]] or list(group)  # without any program: all, none passing
    firsts = first_same([codes[i] for i in written], "call")
    app = best_of(
        {i: 0 if checked[i] else matches[i] for i in written},
        rng,
        tests=1,
        known={i for i in written if checked[i]},
        agreement={i: agreement[i] for i in written},
        same_as={i: written[f] for i, f in zip(written, firsts, strict=True)},
    )
    return {
        "sim": app,
        "paper": best_of({i: matches[i] for i in group}, rng, tests=1),
        "oracle": best_of({i: int(real_public[i]) for i in group}, rng, tests=1),
    }


async def evaluate(items: list[dict[str, Any]], ctx: Context) -> TaskResult:
    k = ctx.settings.k
    params = solve_params(ctx)
    sim_params = ctx.sampling(max_tokens=cruxeval.MAX_TOKENS[ctx.settings.prompt], n=1)
    sim_params.update(stop=["[/ANSWER]"], temperature=0.0)  # one greedy simulation, as the app's
    sim_params.pop("top_p", None)

    given = given_candidates(ctx.settings.candidates) if ctx.settings.candidates else {}

    async def one(entry: tuple[int, dict[str, Any], Problem]) -> dict[str, Any]:
        index, item, problem = entry
        item_id = str(item["task_id"])
        if ctx.settings.candidates:  # the judge alone: an earlier run's candidates, no solve request
            solved = given[item_id]
        else:
            reply = await ctx.requester.chat(item_id, solve.messages(problem), params)
            solved = Solved.from_reply(reply)
        codes = solved.codes
        tests = list(item["test_list"])
        public = public_asserts(problem)
        public_tests = [f"assert {expr} == {expected}" for expr, expected in public]
        real_all = [await asyncio.to_thread(passes, item, code, tests) for code in codes]
        groups = [list(range(g * k, (g + 1) * k)) for g in range(len(codes) // k)]
        used = len(groups) * k
        real_public = [await asyncio.to_thread(passes, item, code, public_tests) for code in codes[:used]]

        sim_parsed: list[bool] = []

        async def simulated_match(c: int, t: int, code: str, expr: str, expected: str) -> bool:
            """Whether the simulation's answer matches ``expected`` (the pipeline's rule; nothing runs)."""
            messages = cruxeval.messages(code, expr, ctx.settings.prompt)
            key = f"{item_id}/c{c}/t{t}"
            sim = await ctx.requester.chat(key, messages, sim_params)
            ((text, _),) = await cruxeval.app_texts(ctx, key, messages, sim_params, sim, expr)
            found = answer_found(text)
            sim_parsed.append(found)
            return found and problem_matches(problem, expected, extract_answer(text))

        asked = [  # each candidate with a program on each public test, all at once
            (c, t, code, expr, expected)
            for c, code in enumerate(codes[:used])
            if code
            for t, (expr, expected) in enumerate(public)
        ]
        matched = await asyncio.gather(*(simulated_match(*job) for job in asked))
        matches = [0] * used
        for (c, *_), match in zip(asked, matched, strict=True):
            matches[c] += int(match)
        # what the pipeline knows without simulating
        checked = [cannot_pass(problem, with_imports(item, code)) if code else None for code in codes[:used]]
        agreement = [0] * used  # a candidate without code agrees with nothing
        for g in groups:
            written = [i for i in g if codes[i]]
            for i, count in zip(written, agreement_counts([codes[i] for i in written], "call"), strict=True):
                agreement[i] = count
        rng = random.Random(ctx.settings.seed + index)
        chosen = [picks(g, codes, matches, checked, agreement, real_public, rng) for g in groups]
        passed = dict(enumerate(real_all))
        return {
            "id": item_id,
            "n": len(codes),
            "correct": sum(real_all),
            "candidates": [
                {
                    "code": code,
                    "passed": ok,
                    "public_passed": real_public[i] if i < used else None,
                    "sim_matches": matches[i] if i < used else None,
                    "cannot_pass": checked[i] if i < used else None,
                    "agreement": agreement[i] if i < used else None,
                }
                for i, (code, ok) in enumerate(zip(codes, real_all, strict=True))
            ],
            # the one drawn pick: from the first group, as a run of the pipeline with k candidates picks
            "chosen": {way: chosen[0][way].candidate for way in ("sim", "oracle")},
            "chosen_passed": {way: real_all[chosen[0][way].candidate] for way in ("sim", "oracle")},
            "groups": len(groups),
            "expected": {
                **{way: sum(c[way].expected(passed) for c in chosen) / len(chosen) for way in WAYS},
                "random": sum(real_all[:used]) / used,
            },
            "solve_parsed": [bool(code) for code in codes],
            "solve_tokens": solved.tokens,
            "solve_cut": solved.cut,
            "solve_looped": solved.looped,
            "simulations": len(sim_parsed),
            "simulations_unparsed": sim_parsed.count(False),
        }

    converted, unconverted = convert_items(items, from_mbpp)
    records = await ctx.map(one, converted)
    counts = [(r["n"], r["correct"]) for r in records]
    metrics: dict[str, Estimate] = {f"pass@{kk}": estimate_pass_at_k(counts, kk) for kk in ctx.ks()}
    metrics[f"best@{k}-sim"] = wilson(sum(r["chosen_passed"]["sim"] for r in records), len(records))
    metrics[f"best@{k}-sim-expected"] = bootstrap([r["expected"]["sim"] for r in records])
    metrics[f"best@{k}-paper"] = bootstrap([r["expected"]["paper"] for r in records])
    metrics[f"best@{k}-oracle"] = wilson(sum(r["chosen_passed"]["oracle"] for r in records), len(records))
    metrics[f"best@{k}-random"] = bootstrap([r["expected"]["random"] for r in records])
    gap = metrics[f"best@{k}-oracle"].value - metrics[f"best@{k}-sim"].value
    paired = {}
    for way in WAYS:
        pairs = [(r["expected"]["random"], r["expected"][way]) for r in records]
        value, low, high = paired_bootstrap(pairs, seed=ctx.settings.seed)
        paired[f"best@{k}-{way}-minus-random"] = {
            "value": value,
            "low": low,
            "high": high,
            "n": len(pairs),
            "better": sum(b > a for a, b in pairs),
            "worse": sum(b < a for a, b in pairs),
            "method": "paired bootstrap",
        }
    solves = [ok for r in records for ok in r["solve_parsed"]]
    replies = sum(r["n"] for r in records)
    cut = sum(r["solve_cut"] for r in records)
    cut_est = wilson(cut, replies)
    solve_cost = {
        "replies": replies,
        "completion_tokens": sum(r["solve_tokens"] for r in records),
        "tokens_per_candidate": sum(r["solve_tokens"] for r in records) / replies if replies else 0.0,
        "cut_by_limit": cut,
        "cut_rate": cut_est.value,
        "cut_low": cut_est.low,
        "cut_high": cut_est.high,
        "stopped_looping": sum(r["solve_looped"] for r in records),  # finish_reason "repetition"
        "max_tokens": SOLVE_MAX_TOKENS,
        "prompt": solve.VERSION,
    }
    tables = [
        {
            "title": "Selection against the expected random pick (paired bootstrap over problems)",
            "header": ["difference", "value", "95% CI", "problems better / worse"],
            "rows": [
                [
                    name,
                    f"{d['value']:+.3f}",
                    f"[{d['low']:+.3f}, {d['high']:+.3f}]",
                    f"{d['better']} / {d['worse']}",
                ]
                for name, d in paired.items()
            ],
        },
        {
            "title": "Solve replies",
            "header": [
                "replies",
                "completion tokens per candidate",
                "cut by the token limit",
                "95% CI",
                "stopped looping",
            ],
            "rows": [
                [
                    replies,
                    f"{solve_cost['tokens_per_candidate']:.1f}",
                    f"{cut} ({cut_est.value:.3f})",
                    f"[{cut_est.low:.3f}, {cut_est.high:.3f}]",
                    solve_cost["stopped_looping"],
                ]
            ],
        },
    ]
    return TaskResult(
        metrics=metrics,
        items=records,
        histogram=[c for _, c in counts],
        extra={
            "simulation_gap": gap,
            "paired": paired,
            "solve": solve_cost,
            "cannot_pass": {  # candidates judged without simulation, and how many of them really passed
                "candidates": sum(bool(c["cannot_pass"]) for r in records for c in r["candidates"]),
                "really_passed": sum(
                    bool(c["cannot_pass"]) and c["passed"] for r in records for c in r["candidates"]
                ),
            },
            "sim_matched_by_public_outcome": _matched_by_outcome(records),
            "tables": tables,
            "unconverted": unconverted,
        },
        parse_failures={
            "solve": (solves.count(False), len(solves)),
            "simulate": (
                sum(r["simulations_unparsed"] for r in records),
                sum(r["simulations"] for r in records),
            ),
        },
        n_items=len(records),
    )
