"""first_divergence between two traces, and between NLEX claims and a trace."""

from __future__ import annotations

from simulator.execution.divergence import first_divergence
from simulator.execution.tracer import trace_in_process

RIGHT = "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n"
WRONG = "def f(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total\n"


def test_identical_traces_do_not_diverge() -> None:
    a = trace_in_process(RIGHT, "f([1, 2])").trace
    b = trace_in_process(RIGHT, "f([1, 2])").trace
    assert first_divergence(a, b) is None


def test_the_first_differing_step_is_found() -> None:
    a = trace_in_process(WRONG, "f([1, 2])").trace
    b = trace_in_process(RIGHT, "f([1, 2])").trace
    found = first_divergence(a, b)
    assert found is not None
    assert (found.step, found.field) == (6, "changed")  # the second iteration: 1 + 4 vs 1 + 2
    assert found.expected == {"total": ("3", "int")} and found.found == {"total": ("5", "int")}


def test_a_prefix_diverges_by_length() -> None:
    b = trace_in_process(RIGHT, "f([1, 2])").trace
    a = trace_in_process(RIGHT, "f([1, 2])", max_steps=4).trace
    found = first_divergence(a, b)
    assert found is not None and found.field == "length" and found.step == 4
