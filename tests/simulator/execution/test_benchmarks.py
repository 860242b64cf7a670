"""Acceptance on the dev benchmarks, through the pool: CRUXEval programs return their gold outputs (run and
traced), MBPP reference solutions pass their asserts, a Code Jam solution is judged on its public test."""

from __future__ import annotations

import ast
import json

import pytest

from simulator.execution import Pool, Program
from simulator.execution.program import call_from_input
from tests.simulator.execution.sandbox_support import benchmark_file


@pytest.fixture(scope="module")
def pool():
    with Pool(workers=2) as pool:
        yield pool


def same_value(actual_repr: str, gold: str) -> bool:
    """Python value equality of two literals (falls back to comparing the text when not literals)."""
    try:
        return ast.literal_eval(actual_repr) == ast.literal_eval(gold)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return actual_repr.strip() == gold.strip()


def cruxeval() -> list[dict]:
    path = benchmark_file("cruxeval", "dev.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("trace", [False, True], ids=["run", "traced"])
def test_cruxeval_dev_programs_return_their_gold_output(pool: Pool, trace: bool) -> None:
    items = cruxeval()
    programs = [Program(code=item["code"], call=call_from_input("f", item["input"])) for item in items]
    results = pool.run_many(programs, trace=trace)
    wrong = [
        (item["id"], result.status, result.value, item["output"])
        for item, result in zip(items, results, strict=True)
        if result.status != "ok" or not same_value(result.value, item["output"])
    ]
    assert len(items) == 200
    assert wrong == []
    if trace:
        assert all(result.trace is not None and result.trace.steps for result in results)
        # the traced return value of the outermost call is the value the call produced
        for result in results:
            returns = [s for s in result.trace.steps if s.event == "return" and s.depth == 0]
            if returns and not result.trace.truncated:
                assert same_value(returns[-1].value.repr, result.value)


def test_mbpp_dev_reference_solutions_pass_their_asserts(pool: Pool) -> None:
    path = benchmark_file("mbpp", "sanitized-dev.jsonl")
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    programs = [
        Program(code=item["code"], tests=tuple(item["test_imports"]) + tuple(item["test_list"]), timeout_s=10)
        for item in items
    ]
    results = pool.run_many(programs)
    failed = [
        (item["task_id"], r.status, r.message)
        for item, r in zip(items, results, strict=True)
        if r.status != "ok"
    ]
    assert len(items) == 170
    assert failed == []


MINIMUM_SCALAR_PRODUCT = """
import sys

def main():
    data = sys.stdin.read().split()
    cases, pos = int(data[0]), 1
    for case in range(1, cases + 1):
        n = int(data[pos]); pos += 1
        xs = sorted(map(int, data[pos:pos + n])); pos += n
        ys = sorted(map(int, data[pos:pos + n]), reverse=True); pos += n
        print(f"Case #{case}: {sum(x * y for x, y in zip(xs, ys))}")

main()
"""


def test_codejam_solution_is_judged_on_its_public_test(pool: Pool) -> None:
    path = benchmark_file("codejam", "dev.jsonl")
    problems = {p["id"]: p for p in map(json.loads, path.read_text().splitlines())}
    problem = problems["codejam/2008/round_1a/minimum_scalar_product"]
    test = problem["public_tests"][0]
    right = pool.run(
        Program(code=MINIMUM_SCALAR_PRODUCT, stdin=test["input"], expected_stdout=test["output"])
    )
    assert right.status == "ok", right.message
    # the same program, sorted the wrong way, is judged wrong
    wrong_code = MINIMUM_SCALAR_PRODUCT.replace("reverse=True", "reverse=False")
    wrong = pool.run(Program(code=wrong_code, stdin=test["input"], expected_stdout=test["output"]))
    assert wrong.status == "wrong_answer"
