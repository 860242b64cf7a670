"""The one seam through which training runs programs: the sandbox's ``run_many``.

Training never executes generated code in its own process; every program goes through
``simulator.execution.run_many`` (sandboxed, rlimited, no network). Functions that run programs take an
``executor`` of its shape (``simulator.execution.RunPrograms``) so unit tests can pass a test double.
"""

from __future__ import annotations

from simulator.execution import run_many
from simulator.execution.program import Program
from simulator.execution.result import ExecutionResult


def run_programs(programs: list[Program]) -> list[ExecutionResult]:
    """Run each program in the sandbox, results in order."""
    return run_many(programs) if programs else []


def trace_programs(programs: list[Program]) -> list[ExecutionResult]:
    """Run each program in the sandbox with the line tracer on (``result.trace`` is a Trace)."""
    return run_many(programs, trace=True) if programs else []
