"""The one seam through which training runs programs: the sandbox's ``run_many``.

Training never executes generated code in its own process; every program goes through
``simulator.execution.run_many`` (sandboxed, rlimited, no network). Functions that run programs take an
``executor`` with the same signature so unit tests can pass a test double.
"""

from __future__ import annotations

from collections.abc import Callable

from simulator.execution.program import Program
from simulator.execution.result import ExecutionResult

Executor = Callable[[list[Program]], list[ExecutionResult]]
TracingExecutor = Callable[[list[Program]], list[ExecutionResult]]


class SandboxUnavailable(RuntimeError):
    """The execution core (simulator.execution.run_many) is not installed in this checkout."""


def _run_many():
    from simulator import execution

    run_many = getattr(execution, "run_many", None)
    if run_many is None:
        raise SandboxUnavailable(
            "simulator.execution.run_many is not available (the sandboxed runner is missing)"
        )
    return run_many


def sandbox_available() -> bool:
    try:
        _run_many()
    except SandboxUnavailable:
        return False
    return True


def run_programs(programs: list[Program]) -> list[ExecutionResult]:
    """Run each program in the sandbox, results in order."""
    return list(_run_many()(programs)) if programs else []


def trace_programs(programs: list[Program]) -> list[ExecutionResult]:
    """Run each program in the sandbox with the line tracer on (``result.trace`` is a Trace)."""
    return list(_run_many()(programs, trace=True)) if programs else []
