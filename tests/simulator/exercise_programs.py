"""The programs the exercise tests trace (the explorer's examples, copied: tests/simulator stays off
webapp), and their traces from the real sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.execution import Program, SandboxError, run
from simulator.execution.trace import Trace

REPO = Path(__file__).resolve().parents[2]

# The explorer's examples (webapp/explorer/programs.py EXAMPLES), copied: tests/simulator stays off webapp.
ALIASING = "def f(xs):\n    ys = xs\n    zs = list(xs)\n    ys.append(4)\n    return xs, zs\n"
FACT = "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n"
LINKED_LIST = (
    "class Node:\n    def __init__(self, value, next=None):\n        self.value = value\n"
    "        self.next = next\n\n\ndef build(values):\n    head = None\n"
    "    for v in reversed(values):\n        head = Node(v, head)\n    return head\n"
)
SQUARES = (
    "def square(x):\n    return x * x\n\n\ndef total(xs):\n    s = 0\n    for x in xs:\n"
    "        s += square(x)\n    return s\n"
)
# examples/programs/running_total.py only defines its functions; as a script it also calls one.
RUNNING_TOTAL = (REPO / "examples" / "programs" / "running_total.py").read_text() + "\ntotal([1, 2, 3])\n"

PROGRAMS = {
    "aliasing": Program(code=ALIASING, call="f([1, 2, 3])"),
    "recursion": Program(code=FACT, call="fact(4)"),
    "linked-list": Program(code=LINKED_LIST, call="build([1, 2, 3])"),
    "running-total": Program(code=RUNNING_TOTAL, stdin=""),
    "squares": Program(code=SQUARES, call="total([1, 2, 3])"),
}


def traced(program: Program, max_steps: int = 1000) -> Trace:
    try:
        result = run(program, trace=True, max_steps=max_steps)
    except SandboxError as exc:
        pytest.skip(f"the sandbox is not available: {exc}")
    assert result.trace is not None
    return result.trace


def all_traces() -> dict[str, Trace]:
    return {name: traced(program) for name, program in PROGRAMS.items()}
