"""The explorer's payload: the trace, the program's lines and the stepper's sentences."""

from __future__ import annotations

import pytest

from simulator.execution import Program, SandboxError, run
from simulator.explore import explorer_payload

CODE = "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n"


@pytest.fixture(scope="module")
def traced():
    program = Program(code=CODE, call="f([1, 2, 3, 4])")
    try:
        result = run(program, trace=True)
    except SandboxError as exc:
        pytest.skip(f"the sandbox is not available: {exc}")
    return program, result.trace


def test_payload_is_the_trace_the_lines_and_the_sentences(traced):
    program, trace = traced
    payload = explorer_payload(trace, program)
    assert payload["trace"]["steps"][0]["event"] == "call"
    assert payload["lines"][0] == "def f(xs):" and payload["shape"] == "call"
    assert payload["sentences"] and all("step" in s for s in payload["sentences"])
