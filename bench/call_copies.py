"""How much of a CRUXEval-O score is the model copying one of the call's arguments as its answer.

    .venv/bin/python bench/call_copies.py --data ../shared/benchmarks/cruxeval/dev.jsonl \
        runs/crux-answer/results.json [more results.json ...]

Reads the results of ``execsim eval cruxeval-o`` (first sample of each item) beside the records, for
those whose call has positional literal arguments only. A prediction is a copy when it equals one of
the arguments as a Python value of the same type. Prints, per results file: the items, the right
answers, the copies and how many of them are right, the right answers that are not copies, and how
many expected outputs equal an argument (what copying can get right).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator.benchmarks import read_jsonl  # noqa: E402


def _arguments(source: str) -> list[Any] | None:
    try:
        call = ast.parse(f"f({source})", mode="eval").body
        if not isinstance(call, ast.Call) or call.keywords:
            return None
        return [ast.literal_eval(arg) for arg in call.args]
    except (SyntaxError, ValueError):
        return None


def _among(value: Any, values: list[Any]) -> bool:
    return any(type(value) is type(v) and value == v for v in values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("results", type=Path, nargs="+")
    args = parser.parse_args()
    records = {record["id"]: record for _, record in read_jsonl(args.data, "CRUXEval")}
    for path in args.results:
        n = right = copies = copies_right = expected_copies = 0
        for item in json.loads(path.read_text())["items"]:
            record = records[item["id"]]
            arguments = _arguments(record["input"])
            if arguments is None:
                continue
            sample = item["samples"][0]
            try:
                predicted = ast.literal_eval(sample["answer"]) if sample.get("answer") is not None else None
                copy = sample.get("answer") is not None and _among(predicted, arguments)
            except (SyntaxError, ValueError):
                copy = False
            n += 1
            right += bool(sample["passed"])
            copies += copy
            copies_right += copy and bool(sample["passed"])
            expected_copies += _among(ast.literal_eval(record["output"]), arguments)
        print(
            f"{path}: n={n} right {right}; copies of an argument {copies} ({copies / n:.0%}), "
            f"{copies_right} of them right; right and not a copy {right - copies_right} "
            f"({(right - copies_right) / n:.1%}); expected outputs equal to an argument {expected_copies}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
