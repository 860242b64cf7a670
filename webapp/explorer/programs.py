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
