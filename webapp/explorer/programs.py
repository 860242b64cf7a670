"""A traced execution of a program for the explorer and the annotation queue (which program a run's
candidate is on a test is the run's own answer: ``Run.program_of``)."""

from __future__ import annotations

from simulator.execution import Program, SandboxError
from simulator.execution import run as run_program
from simulator.execution.result import ExecutionResult


def traced(program: Program, max_steps: int) -> ExecutionResult:
    """Run ``program`` in the sandbox with a trace capped at ``max_steps``; a sandbox that cannot
    start is reported as a result (status invalid_input with the reason), not raised."""
    problems = program.problems()
    if problems:
        return ExecutionResult.invalid("; ".join(problems))
    try:
        return run_program(program, trace=True, max_steps=max_steps)
    except SandboxError as exc:
        return ExecutionResult.invalid(f"the sandbox is not available: {exc}")


# Programs a newcomer can trace at once from the paste page ("Try one"): (title, code, call), by name.
EXAMPLES: dict[str, tuple[str, str, str]] = {
    "aliasing": (
        "Two names, one list",
        "def f(xs):\n    ys = xs\n    zs = list(xs)\n    ys.append(4)\n    return xs, zs\n",
        "f([1, 2, 3])",
    ),
    "recursion": (
        "Recursion: factorial",
        "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n",
        "fact(4)",
    ),
    "linked-list": (
        "A linked list",
        "class Node:\n    def __init__(self, value, next=None):\n        self.value = value\n"
        "        self.next = next\n\n\ndef build(values):\n    head = None\n"
        "    for v in reversed(values):\n        head = Node(v, head)\n    return head\n",
        "build([1, 2, 3])",
    ),
}
