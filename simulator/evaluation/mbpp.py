"""MBPP: solve rate (pass@1, pass@k), Best@k by simulation against the expected random pick, and the
cost of the candidates.

Per problem the model writes n candidates in one request: the app's own solve request
(``simulator.prompts.solve`` on the problem ``simulator.benchmarks.from_mbpp`` makes of the record,
the first assert public; prefilled opening fence, stop at the closing fence, 512 tokens, as the
pipeline sends it). Each candidate runs for real on all the problem's asserts (ground truth). Best@k
looks at the first k candidates and picks one, as the papers do, from what is known: the public test.

- ``best@k-sim``          by simulation: for each public test ``assert f(args) == expected`` the model
                          predicts ``f(args)`` given the candidate's code (the CRUXEval-O prompt; greedy,
                          or with ``--sims m`` the majority vote of m samples); a prediction matches
                          ``expected`` by the app's rule (``pipeline.matching.problem_matches``: literal
                          equality, else the text), without running anything. A candidate that
                          cannot pass (``pipeline.static.cannot_pass``: it does not parse, never
                          defines the function or surely raises NameError) scores 0 whatever its
                          simulation said, as in the pipeline. Most matches wins; ties are broken at
                          random with a seeded RNG (seed + item index): one draw per problem (Wilson).
                          This is the paper's rule, the figure issue 12 asks for.
- ``best@k-sim-expected`` the same pick's expected correctness over the random tie-break (the mean over
                          the tied candidates): the figure without the draw's noise (bootstrap). With
                          n a multiple of k, each disjoint group of k candidates is one Best@k and the
                          expectations are averaged over the groups (n=8, k=4: two).
- ``likely`` / ``sim-likely`` (in ``extra.paired`` only) by the likelihood of the expected output:
                          for each public test the log-probability the model gives ``expected``
                          as the answer of the same simulate request (``ChatClient.score``, the
                          ending as the narrator writes it: ``simulate.answer_ending``), summed over
                          the public tests; a candidate that cannot pass never wins. ``likely`` picks
                          the likeliest; ``sim-likely`` picks by simulation, ties broken by that
                          likelihood instead of at random; ``sim-likely-agree`` by simulation,
                          ties broken by that likelihood plus the log of the candidate's
                          ``agreement`` (``weigh_by_agreement``: the program's share of the samples
                          times the likelihood). Each candidate's ``likelihood`` is in results.json.
                          Measured only with k > 1, unless ``--no-likelihood`` (a run of n=8 takes
                          about four times as long with it: vLLM reads a scored prompt without its
                          cached prefix).
- ``sim-count`` (in ``extra.paired`` only, with ``--sims m`` > 1) the paper's rule with its m
                          output-prediction attempts per test counted, not voted: a candidate's
                          score is how many of its attempts on the public tests match
                          (``sim_count`` in results.json), ties at random. The paper makes 5
                          attempts per test and does not say how it combines them; a count keeps
                          a program whose simulation the model gets right 2 times in 5 above one
                          it gets right once, where the vote calls both a miss.
- ``sim-known`` (in ``extra.paired`` only) the app's rule with ties at random: as ``best@k-sim``, but
                          a tie never goes to a program that cannot pass, or to a reply without a
                          program, while a tied one can (``selection.best_of``'s ``known``; the
                          paper draws among them all).
- ``best@k-oracle``       by real execution of the public test (the oracle of the papers), ties at random.
- ``best@k-random``       the *expected* random pick: the mean correctness of the candidates in the
                          groups (pass@1 over them), not one draw (bootstrap).
- ``agree`` / ``sim-agree`` (in ``extra.paired`` only) what the candidates agree on, the
                          self-consistency of code: a candidate's ``agreement`` is how many of its
                          group are the same program (``source.same_program``: at most layout,
                          comments and test code differ). ``agree`` picks by agreement alone (no
                          simulation); ``sim-agree`` is the app's default pick
                          (``RunSettings.ties``): by simulation, a tie never going to a program
                          that cannot pass while a tied one can, then broken by agreement, then at
                          random, where the paper breaks it at random.

``extra.paired`` holds ``best@k-sim-expected`` minus ``best@k-random`` (and the oracle's) per problem
with a paired bootstrap 95% interval (``paired.paired_bootstrap``): what selection by simulation gains
over picking blindly; and minus the same selection without the static check (every candidate is
simulated, so both are measured in one run): what the check adds; and ``agree``'s and
``sim-known``'s and ``sim-agree``'s gains over the expected random pick and over ``sim``, and the same
for ``likely``, ``sim-likely`` and ``sim-likely-agree``.
``extra.cannot_pass`` counts the candidates the check judged, and those of them that really passed
(0 unless the check is wrong); ``extra.sim_matched_by_public_outcome`` how often the simulation
matched among the candidates that really pass the public test and among those that fail it.
The simulation gap is ``best@k-oracle - best@k-sim``. ``extra.solve`` reports completion tokens per
candidate and the share of replies cut by the token limit. With ``--candidates RESULTS`` no solve
request is sent: the candidates (and their solve figures) are those of an earlier run's results.json,
so two models judging the same programs compare their judges alone, paired by problem
(``execsim eval-diff A B --measure sim``), without the noise of fresh samples. A record that cannot
become a problem (no ``assert f(args) == value``) is skipped and listed in ``extra.unconverted``.
"""

from __future__ import annotations

import ast
import asyncio
import json
import math
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
from simulator.pipeline.matching import majority, problem_matches
from simulator.pipeline.settings import RunSettings
from simulator.pipeline.static import cannot_pass
from simulator.problem import Problem
from simulator.prompts import simulate, solve
from simulator.source import agreement_counts, parse_python

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


def pick(scores: Sequence[Any], rng: random.Random) -> int:
    best = max(scores)
    return rng.choice([i for i, s in enumerate(scores) if s == best])


def public_asserts(problem: Problem) -> list[tuple[str, str]]:
    """(expression, expected) of each public test: what selection may look at."""
    return [(f"{problem.entry_point}({t.input})", t.output) for t in problem.public_tests]


def tie_expectation(scores: Sequence[Any], passed: list[bool]) -> float:
    """Expected correctness of picking uniformly among the top-scoring candidates."""
    best = max(scores)
    tied = [ok for score, ok in zip(scores, passed, strict=True) if score == best]
    return sum(tied) / len(tied)


def judged_ways(
    codes: Sequence[str],
    checked: Sequence[str | None],
    matches: Sequence[float],
    agreement: Sequence[int],
    passed: Sequence[bool],
    groups: Sequence[Sequence[int]],
) -> dict[str, float]:
    """The expected correctness of the picks that use the static check (``checked``: each program's
    ``cannot_pass``), averaged over the groups: ``sim`` (the paper's rule, a known failure scoring 0),
    ``sim-known`` (a tie never to a known failure or a reply without a program, as in the app) and
    ``sim-agree`` (then agreement: the app's default)."""
    scores = [0.0 if why else float(m) for why, m in zip(checked, matches, strict=True)]
    unknown = [bool(code) and not why for code, why in zip(codes, checked, strict=True)]
    ranked = {
        "sim": scores,
        "sim-known": list(zip(scores, unknown, strict=True)),
        "sim-agree": list(zip(scores, unknown, agreement, strict=True)),
    }
    return {way: over_groups(r, passed, groups) for way, r in ranked.items()}


def over_groups(scores: Sequence[Any], passed: Sequence[bool], groups: Sequence[Sequence[int]]) -> float:
    """A pick's expected correctness (``tie_expectation``) in each group of k, averaged."""
    return sum(tie_expectation([scores[i] for i in g], [passed[i] for i in g]) for g in groups) / len(groups)


def weigh_by_agreement(logprob: float, agreement: int) -> float:
    """A candidate's likelihood of the expected outputs plus the log of how many candidates are the
    same program: the probability the model puts on that program and those outputs together (it
    sampled that program ``agreement`` times)."""
    return logprob + math.log(agreement) if agreement > 0 else -math.inf


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


async def evaluate(items: list[dict[str, Any]], ctx: Context) -> TaskResult:
    k = ctx.settings.k
    sims = ctx.settings.sims
    measure_likelihood = ctx.settings.likelihood and k > 1  # with one candidate there is no pick
    params = solve_params(ctx)
    sim_params = ctx.sampling(max_tokens=cruxeval.MAX_TOKENS[ctx.settings.prompt], n=sims)
    sim_params["stop"] = ["[/ANSWER]"]
    if sims == 1:  # one greedy simulation; m > 1 samples vote (the harness's temperature, 0.8)
        sim_params["temperature"] = 0.0
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
        # Best@k over each disjoint group of k candidates (n=8, k=4: two groups), averaged
        groups = [list(range(g * k, (g + 1) * k)) for g in range(len(codes) // k)]
        used = len(groups) * k
        real_public = [await asyncio.to_thread(passes, item, code, public_tests) for code in codes[:used]]

        sim_parsed: list[bool] = []

        async def simulated_match(c: int, t: int, code: str, expr: str, expected: str) -> tuple[bool, int]:
            """Whether the simulations' majority answer matches ``expected``, and how many of the
            attempts do."""
            messages = cruxeval.messages(code, expr, ctx.settings.prompt)
            key = f"{item_id}/c{c}/t{t}"
            sim = await ctx.requester.chat(key, messages, sim_params)
            finished = await cruxeval.app_texts(ctx, key, messages, sim_params, sim, expr)
            texts = [text for text, _ in finished]
            found = [answer_found(text) for text in texts]
            sim_parsed.extend(found)
            answers = [extract_answer(text) if ok else None for text, ok in zip(texts, found, strict=True)]
            # the pipeline's rule; nothing runs
            hits = sum(a is not None and problem_matches(problem, expected, a) for a in answers)
            winner, _ = majority("call", answers)
            return winner is not None and problem_matches(problem, expected, winner), hits

        async def likelihood(c: int, t: int, code: str, expr: str, expected: str) -> float:
            messages = cruxeval.messages(code, expr, cruxeval.SIMULATE_ANSWER)
            ending = simulate.answer_ending(expected, expr)
            return await ctx.requester.score(f"{item_id}/c{c}/t{t}", messages, ending)

        asked = [  # each candidate with a program on each public test
            (c, t, code, expr, expected)
            for c, code in enumerate(codes[:used])
            if code
            for t, (expr, expected) in enumerate(public)
        ]
        scored = asked if measure_likelihood else []
        # all of an item's simulations and likelihoods at once
        matched, logprobs = await asyncio.gather(
            asyncio.gather(*(simulated_match(*job) for job in asked)),
            asyncio.gather(*(likelihood(*job) for job in scored)),
        )
        raw_scores = [0.0] * used
        hit_counts = [0] * used  # matching attempts, summed over the public tests
        for (c, *_), (match, hits) in zip(asked, matched, strict=True):
            raw_scores[c] += int(match)
            hit_counts[c] += hits
        likely = [0.0 if code else -math.inf for code in codes[:used]]
        for (c, *_), logprob in zip(scored, logprobs, strict=True):
            likely[c] += logprob
        # what the pipeline knows without simulating: a program that cannot pass scores nothing
        checked = [cannot_pass(problem, with_imports(item, code)) if code else None for code in codes[:used]]
        sim_scores = [0.0 if why else score for why, score in zip(checked, raw_scores, strict=True)]
        likely = [-math.inf if why else score for why, score in zip(checked, likely, strict=True)]
        oracle_scores = [float(x) for x in real_public]
        agreement = [0] * used  # a candidate without code agrees with nothing
        for g in groups:
            written = [i for i in g if codes[i]]
            for i, count in zip(written, agreement_counts([codes[i] for i in written], "call"), strict=True):
                agreement[i] = count
        rng = random.Random(ctx.settings.seed + index)
        # the one drawn pick: from the first group, as a run of the pipeline with k candidates picks
        chosen = {"sim": pick(sim_scores[:k], rng), "oracle": pick(oracle_scores[:k], rng)}

        def expected(scores: Sequence[Any]) -> float:
            return over_groups(scores, real_all, groups)

        by_likelihood = (
            {
                "likely": expected(likely),
                "sim-likely": expected(list(zip(sim_scores, likely, strict=True))),
                "sim-likely-agree": expected(
                    [
                        (s, weigh_by_agreement(lp, a))
                        for s, lp, a in zip(sim_scores, likely, agreement, strict=True)
                    ]
                ),
            }
            if measure_likelihood
            else {}
        )
        by_count = (  # with one greedy simulation the count is the match
            {"sim-count": expected([0 if why else n for why, n in zip(checked, hit_counts, strict=True)])}
            if sims > 1
            else {}
        )
        return {
            "id": item_id,
            "n": len(codes),
            "correct": sum(real_all),
            "candidates": [
                {
                    "code": code,
                    "passed": passed,
                    "public_passed": real_public[i] if i < used else None,
                    "sim_matches": raw_scores[i] if i < used else None,
                    "sim_count": hit_counts[i] if i < used else None,
                    "cannot_pass": checked[i] if i < used else None,
                    "agreement": agreement[i] if i < used else None,
                    "likelihood": likely[i]
                    if i < used and measure_likelihood and math.isfinite(likely[i])
                    else None,
                }
                for i, (code, passed) in enumerate(zip(codes, real_all, strict=True))
            ],
            "chosen": chosen,
            "chosen_passed": {way: real_all[i] for way, i in chosen.items()},
            "groups": len(groups),
            "expected": {
                **judged_ways(codes[:used], checked, raw_scores, agreement, real_all[:used], groups),
                "sim-unchecked": expected(raw_scores),
                "agree": expected([float(a) for a in agreement]),
                "oracle": expected(oracle_scores),
                "random": sum(real_all[:used]) / used,
                **by_likelihood,
                **by_count,
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
    metrics[f"best@{k}-oracle"] = wilson(sum(r["chosen_passed"]["oracle"] for r in records), len(records))
    metrics[f"best@{k}-random"] = bootstrap([r["expected"]["random"] for r in records])
    gap = metrics[f"best@{k}-oracle"].value - metrics[f"best@{k}-sim"].value
    paired = {}
    ways = {
        f"best@{k}-sim-minus-random": ("random", "sim"),
        f"best@{k}-oracle-minus-random": ("random", "oracle"),
        f"best@{k}-sim-minus-sim-unchecked": ("sim-unchecked", "sim"),
        f"best@{k}-sim-count-minus-random": ("random", "sim-count"),
        f"best@{k}-sim-count-minus-sim": ("sim", "sim-count"),
        f"best@{k}-sim-known-minus-sim": ("sim", "sim-known"),
        f"best@{k}-sim-known-minus-random": ("random", "sim-known"),
        f"best@{k}-agree-minus-random": ("random", "agree"),
        f"best@{k}-sim-agree-minus-random": ("random", "sim-agree"),
        f"best@{k}-sim-agree-minus-sim": ("sim", "sim-agree"),
        f"best@{k}-likely-minus-random": ("random", "likely"),
        f"best@{k}-sim-likely-minus-random": ("random", "sim-likely"),
        f"best@{k}-sim-likely-minus-sim": ("sim", "sim-likely"),
        f"best@{k}-sim-likely-agree-minus-sim": ("sim", "sim-likely-agree"),
        f"best@{k}-sim-likely-agree-minus-random": ("random", "sim-likely-agree"),
    }
    for name, (base, way) in ways.items():
        if records and way not in records[0]["expected"]:
            continue  # measured without the likelihood (--no-likelihood, or k = 1), or sims = 1
        pairs = [(r["expected"][base], r["expected"][way]) for r in records]
        value, low, high = paired_bootstrap(pairs, seed=ctx.settings.seed)
        paired[name] = {
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
            "sims": sims,
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
