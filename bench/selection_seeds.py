"""Does a way of picking a candidate beat another, over several MBPP runs? Issue 12, results.md
section 24.

    .venv/bin/python bench/selection_seeds.py runs/s22/mbpp-n8-{b,c} [--ways sim-likely:sim ...]

One ``execsim eval mbpp --n 8 --k 4`` run holds a handful of problems where the ways of picking
differ, and a run with fresh samples moves them (docs/results.md, sections 22 and 23). This pools
the runs: per problem, each way's expected correctness (``items[].expected``) averaged over the runs
that scored it, then each difference (``WAY:BASE``) with a paired bootstrap interval over problems
(``paired.paired_bootstrap``: the problem is the unit, its runs kept together), and the problems
better and worse. It also says how well the likelihood of the expected output separates the
candidates that pass the public test from those that fail it, within a problem (pairs ranked right
and wrong), which is what selection by likelihood has to work with; and where Best@k can gain at
all: the groups of k that hold both a program passing every test and one failing, how often each
way picks a passing one there, and how often the simulation matched the public test there. With
``--recheck DATA`` it judges the stored candidates again with the current static check (the ways
``sim+recheck``, ``sim-known+recheck``, ``sim-agree+recheck``): what a change to the check gains.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from simulator.benchmarks import from_mbpp
from simulator.evaluation.harness import read_outputs
from simulator.evaluation.mbpp import judged_ways, load, tie_expectation, with_imports
from simulator.evaluation.paired import paired_bootstrap
from simulator.pipeline.static import cannot_pass

DEFAULT_WAYS = (  # the paper's rule, the app's (with ties at random, and its default), then the rest
    "sim:random",
    "sim-known:sim",
    "sim-agree:random",
    "likely:random",
    "sim-likely:random",
    "sim-likely:sim",
    "sim-likely-agree:random",
    "sim-likely-agree:sim",
    "agree:random",
    "sim-count:random",
    "sim-count:sim",
)


def read(folders: list[Path]) -> list[dict[str, Any]]:
    try:
        return read_outputs(folders, "mbpp")
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def recheck(records: list[dict[str, Any]], data: Path) -> tuple[int, int, int]:
    """Judge each stored candidate again with the current static check and add, beside each item's
    ``expected``, the ways it changes as ``WAY+recheck``: what a change to the check gains on the
    same candidates, paired. Returns the candidates judged before and now, and how many of those
    judged now really pass every test (0 unless the check is wrong)."""
    items = {str(item["task_id"]): item for item in load(data)}
    before = now = wrong = 0
    for record in records:
        for item in record["items"]:
            source = items[str(item["id"])]
            problem = from_mbpp(source)
            used = [c for c in item["candidates"] if c["public_passed"] is not None]
            k = len(used) // item["groups"]
            checked = [
                cannot_pass(problem, with_imports(source, c["code"])) if c["code"] else None for c in used
            ]
            ways = judged_ways(
                [c["code"] for c in used],
                checked,
                [c["sim_matches"] for c in used],
                [c["agreement"] for c in used],
                [bool(c["passed"]) for c in used],
                [range(g * k, (g + 1) * k) for g in range(item["groups"])],
            )
            item["expected"].update({f"{way}+recheck": value for way, value in ways.items()})
            before += sum(bool(c["cannot_pass"]) for c in used)
            now += sum(bool(why) for why in checked)
            wrong += sum(bool(why) and bool(c["passed"]) for c, why in zip(used, checked, strict=True))
    return before, now, wrong


def per_problem(records: list[dict[str, Any]], way: str) -> dict[str, float] | None:
    """Each problem's expected correctness by ``way``, averaged over the runs; None when a run has
    no such way (its results predate it)."""
    values: dict[str, list[float]] = defaultdict(list)
    for record in records:
        for item in record["items"]:
            if way not in item["expected"]:
                return None
            values[str(item["id"])].append(float(item["expected"][way]))
    return {problem: sum(v) / len(v) for problem, v in values.items()}


def ranked_pairs(records: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(right, wrong, tied): pairs of one problem's candidates, one passing the public test and one
    failing it, both with a likelihood, ranked by it."""
    right = wrong = tied = 0
    for record in records:
        for item in record["items"]:
            scored = [c for c in item["candidates"] if c.get("likelihood") is not None]
            passing = [c["likelihood"] for c in scored if c["public_passed"]]
            failing = [c["likelihood"] for c in scored if c["public_passed"] is False]
            for p in passing:
                for f in failing:
                    right += p > f
                    wrong += p < f
                    tied += p == f
    return right, wrong, tied


def mixed_groups(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Best@k differs from a random pick only in a group of k holding both a program that passes
    every test and one that fails: how many such groups, the chance that the simulation's pick
    (``sim``: public tests matched, a program known to fail scoring none, ties at random), a random
    pick and the oracle's pick pass there, and the simulation's matches for the passing and failing
    candidates there (``[matched, n]``), and with ``--sims m`` their matching attempts
    (``counted``: attempts summed, candidates)."""
    out: dict[str, Any] = {
        "groups": 0,
        "mixed": 0,
        "sim": 0.0,
        "random": 0.0,
        "oracle": 0.0,
        "pass": [0, 0],
        "fail": [0, 0],
        "counted": {"pass": [0, 0], "fail": [0, 0]},  # matching attempts (--sims m), candidates
    }
    for record in records:
        for item in record["items"]:
            used = [c for c in item["candidates"] if c["public_passed"] is not None]
            k = len(used) // item["groups"]
            for g in range(item["groups"]):
                group = used[g * k : (g + 1) * k]
                out["groups"] += 1
                passed = [bool(c["passed"]) for c in group]
                if all(passed) or not any(passed):
                    continue
                out["mixed"] += 1
                sim = [0 if c["cannot_pass"] else c["sim_matches"] for c in group]
                oracle = [int(c["public_passed"]) for c in group]
                out["sim"] += tie_expectation(sim, passed)
                out["oracle"] += tie_expectation(oracle, passed)
                out["random"] += sum(passed) / len(passed)
                for c, ok in zip(group, passed, strict=True):
                    cell = out["pass" if ok else "fail"]
                    cell[0] += bool(c["sim_matches"]) and not c["cannot_pass"]
                    cell[1] += 1
                    if c.get("sim_count") is not None:
                        counted = out["counted"]["pass" if ok else "fail"]
                        counted[0] += 0 if c["cannot_pass"] else c["sim_count"]
                        counted[1] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="execsim eval mbpp output folders")
    parser.add_argument("--ways", nargs="+", default=list(DEFAULT_WAYS), help="WAY:BASE differences")
    parser.add_argument(
        "--recheck",
        type=Path,
        metavar="DATA",
        help="the MBPP file of the runs: judge the stored candidates again with the current static "
        "check, as the ways sim+recheck, sim-known+recheck and sim-agree+recheck",
    )
    args = parser.parse_args(argv)
    records = read(args.runs)
    if args.recheck:
        before, now, wrong = recheck(records, args.recheck)
        print(f"static check: {before} candidates judged before, {now} now, {wrong} of those pass every test")
    print(f"{len(records)} runs, {len({str(i['id']) for r in records for i in r['items']})} problems")
    print(f"{'difference':<24} {'value':>7}  {'95% CI':<18} better / worse")
    for spec in args.ways:
        way, _, base = spec.partition(":")
        base = base or "random"
        mine, theirs = per_problem(records, way), per_problem(records, base)
        name = f"{way} - {base}"
        if mine is None or theirs is None:
            print(f"{name:<24} not in every run")
            continue
        pairs = [(theirs[p], mine[p]) for p in sorted(mine)]
        value, low, high = paired_bootstrap(pairs, seed=0)
        better, worse = sum(b > a for a, b in pairs), sum(b < a for a, b in pairs)
        print(f"{name:<24} {value:+.4f}  [{low:+.4f}, {high:+.4f}]  {better} / {worse}")
    mixed = mixed_groups(records)
    if mixed["mixed"]:
        n = mixed["mixed"]
        print(
            f"groups of k holding a passing and a failing program: {n} of {mixed['groups']}; there a pick "
            f"passes by simulation {mixed['sim'] / n:.1%}, at random {mixed['random'] / n:.1%}, "
            f"by the oracle {mixed['oracle'] / n:.1%}; the simulation matched {mixed['pass'][0]} of "
            f"{mixed['pass'][1]} passing and {mixed['fail'][0]} of {mixed['fail'][1]} failing ones there"
        )
        counted = mixed["counted"]
        if counted["pass"][1] and counted["fail"][1]:
            print(
                "matching attempts a candidate there (--sims m): "
                f"passing {counted['pass'][0] / counted['pass'][1]:.2f}, "
                f"failing {counted['fail'][0] / counted['fail'][1]:.2f}"
            )
    right, wrong, tied = ranked_pairs(records)
    total = right + wrong + tied
    if total:
        print(
            f"likelihood, pairs of a problem's candidates (passing / failing the public test): "
            f"{right} ranked right, {wrong} wrong, {tied} tied ({right / total:.1%} right)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
