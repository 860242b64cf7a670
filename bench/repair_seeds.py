"""Does repair fix more than it breaks, over several seeds? Issue 12, results.md section 23.

    .venv/bin/python bench/repair_seeds.py runs/s21/rlef-base-s{0..5} [--then runs/s21/rlef-greedy-s{0..5}]

One ``execsim eval self-rlef`` run counts a handful of programs that repair fixed or broke, and two
runs of the same settings with other seeds disagree by as much (docs/results.md, section 23). This
pools the runs of one setting: how often the simulation judged the first attempts right, by what they
really do (pass every test, the public one only, or fail it); for the public and the private tests,
the fail -> pass and pass -> fail counts summed over the runs, and the mean change per problem (final
minus initial pass, averaged over the runs) with a paired bootstrap interval over problems
(``paired.paired_bootstrap``: the problem is the unit, its seeds kept together). Given a second group
(``--then``), the same for it, and the paired difference of the final pass rates per problem (second
group minus first).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from simulator.evaluation.harness import read_outputs
from simulator.evaluation.paired import paired_bootstrap

SPLITS = ("public", "private")


def read(folders: list[Path]) -> list[dict[str, Any]]:
    try:
        return read_outputs(folders, "self-rlef")
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def outcomes(records: list[dict[str, Any]], split: str) -> dict[str, list[tuple[bool, bool]]]:
    """Per problem, (initial, final) passes of ``split`` in each run that scored it."""
    by_problem: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for record in records:
        for item in record["items"]:
            if item["initial"][split] is not None:
                by_problem[str(item["id"])].append((bool(item["initial"][split]), bool(item["final"][split])))
    return by_problem


def mean(pairs: list[tuple[bool, bool]], which: int) -> float:
    return sum(p[which] for p in pairs) / len(pairs)


CLASSES = {  # what a first attempt really does: (passes the public test, passes the private tests)
    "passing every test": (True, True),
    "passing the public test only": (True, False),
    "failing the public test": (False, None),
}


def judged_right(records: list[dict[str, Any]], real: tuple[bool, bool | None]) -> tuple[int, int]:
    """First attempts whose real (public, private) passes are ``real`` (None: either), and of them
    those the simulation judged right (submitted without a repair request: ``repair_by_simulation``)."""
    attempts = [
        item
        for record in records
        for item in record["items"]
        if item["initial"]["code"] is not None
        and bool(item["initial"]["public"]) == real[0]
        and real[1] in (None, bool(item["initial"]["private"]))
    ]
    return sum(item["repair_by_simulation"] > 0 for item in attempts), len(attempts)


def group_lines(name: str, records: list[dict[str, Any]]) -> list[str]:
    lines = [f"{name}: {len(records)} runs"]
    for word, real in CLASSES.items():
        right, total = judged_right(records, real)
        lines.append(f"  first attempts {word}, judged right by simulation: {right} of {total}")
    for split in SPLITS:
        by_problem = outcomes(records, split)
        runs = [pair for pairs in by_problem.values() for pair in pairs]
        fixed = sum(not a and b for a, b in runs)
        broke = sum(a and not b for a, b in runs)
        value, low, high = paired_bootstrap([(mean(p, 0), mean(p, 1)) for p in by_problem.values()])
        lines.append(
            f"  {split}: fail -> pass {fixed}, pass -> fail {broke} (of {len(runs)} problem runs); "
            f"change per problem {value:+.4f} [{low:+.4f}, {high:+.4f}] (n={len(by_problem)})"
        )
    return lines


def between_lines(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> list[str]:
    lines = ["second - first, final pass per problem (paired over problems):"]
    for split in SPLITS:
        a, b = outcomes(first, split), outcomes(second, split)
        shared = sorted(a.keys() & b.keys())
        value, low, high = paired_bootstrap([(mean(a[i], 1), mean(b[i], 1)) for i in shared])
        lines.append(f"  {split}: {value:+.4f} [{low:+.4f}, {high:+.4f}] (n={len(shared)})")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path, nargs="+", help="eval self-rlef output folders, one setting")
    parser.add_argument("--then", type=Path, nargs="+", default=[], help="a second setting's folders")
    args = parser.parse_args(argv)
    first = read(args.first)
    lines = group_lines("first", first)
    if args.then:
        second = read(args.then)
        lines += group_lines("second", second) + between_lines(first, second)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
