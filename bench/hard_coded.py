"""How many programs of a run are hard-coded: a function that returns one literal whatever its
arguments (``simulator.pipeline.static.known_failure``), issue 12, results.md section 21.

    .venv/bin/python bench/hard_coded.py runs/s19/fix-s0 runs/s19/mbpp-B ... \
        [--data /work/shared/benchmarks/mbpp/sanitized-dev.jsonl]

For an ``execsim eval self-rlef`` output: the initial programs that are hard-coded (and of them, those
passing the public test for real), and the programs that went fail -> pass on the public test after
repair, how many of those are hard-coded and how many pass the private tests. For an ``execsim eval
mbpp`` output: the candidates that are hard-coded, of all candidates.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from simulator.evaluation.self_rlef import load, to_problem
from simulator.pipeline.static import HARD_CODED, known_failure
from simulator.problem import Problem


def hard_coded(problem: Problem, code: str | None) -> bool:
    failure = known_failure(problem, code) if code else None
    return failure is not None and HARD_CODED in failure.reason


def self_rlef_line(record: dict, problems: dict[str, Problem]) -> str:
    items = [i for i in record["items"] if i["id"] in problems]
    initial = [i for i in items if hard_coded(problems[i["id"]], i["initial"]["code"])]
    fixed = [i for i in items if not i["initial"]["public"] and i["final"]["public"]]
    fixed_hard = [i for i in fixed if hard_coded(problems[i["id"]], i["final"]["code"])]
    with_code = sum(bool(i["initial"]["code"]) for i in items)
    initial_public = sum(bool(i["initial"]["public"]) for i in initial)
    fixed_private = sum(bool(i["final"]["private"]) for i in fixed)
    return (
        f"initial hard-coded {len(initial)} of {with_code} (passing the public test {initial_public}); "
        f"public fail -> pass {len(fixed)}, hard-coded {len(fixed_hard)}, "
        f"passing the private tests {fixed_private}"
    )


def mbpp_line(record: dict) -> str:
    candidates = [c for item in record["items"] for c in item["candidates"]]
    hard = sum(HARD_CODED in (c["cannot_pass"] or "") for c in candidates)
    return f"candidates hard-coded {hard} of {len(candidates)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="eval self-rlef or eval mbpp output folders")
    parser.add_argument("--data", type=Path, default=Path("/work/shared/benchmarks/mbpp/sanitized-dev.jsonl"))
    args = parser.parse_args()
    problems = {}
    for item in load(args.data):
        try:
            problems[item["id"]] = to_problem(item)
        except ValueError:  # an MBPP record with no assert of the form f(args) == value
            continue
    for folder in args.runs:
        record = json.loads((folder / "results.json").read_text())
        line = self_rlef_line(record, problems) if record["task"] == "self-rlef" else mbpp_line(record)
        print(f"{folder}: {line}")


if __name__ == "__main__":
    main()
