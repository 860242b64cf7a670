"""The seam between the pipeline and real execution, and the one "run it for real, compare, check the
simulation" step that every stage uses (the simulate stage with ``real``, the final execution, "Run
for real" afterwards, "Simulate my code").

``LocalExecutor`` runs programs with ``simulator.execution.run`` (sandboxed, in a worker thread so the
event loop keeps streaming) and verifies NLEX texts with ``simulator.nlex.verify``. Unit tests pass a
double with the same two methods instead.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from simulator.execution.program import Program
from simulator.execution.result import ExecutionResult
from simulator.nlex.verify import Verification, unchecked, verify_result
from simulator.pipeline.matching import matches
from simulator.problem import Kind, Problem, TestCase


class ExecutorUnavailable(RuntimeError):
    """Real execution was asked for but the runner is not installed/importable."""


class Executor(Protocol):
    async def execute(self, program: Program, *, trace: bool) -> ExecutionResult: ...

    def verify(self, nlex: str, result: ExecutionResult, program: Program) -> Verification: ...


class LocalExecutor:
    """Runs programs with ``simulator.execution.run`` and verifies NLEX with ``simulator.nlex``."""

    async def execute(self, program: Program, *, trace: bool) -> ExecutionResult:
        try:
            from simulator.execution import run as run_program
        except ImportError as exc:
            raise ExecutorUnavailable(f"real execution is not available here: {exc}") from exc
        return await asyncio.to_thread(run_program, program, trace=trace)

    def verify(self, nlex: str, result: ExecutionResult, program: Program) -> Verification:
        try:
            return verify_result(nlex, result, program)
        except Exception as exc:  # a checker bug must not end the run
            return unchecked("error", f"checking the simulation failed: {type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class RealRun:
    """One program really run on one input: its status, its output (as judged: stdout or the call's
    value repr, with the status appended when it failed), whether that counts as ``expected``, the
    verification of the NLEX that simulated it (None when there was none), and what the run cost, as
    a judge reports it: its wall time in seconds (slower when ``traced``: the line tracer ran) and
    its peak memory. The ``real`` field of ``verdict`` events and the body of ``execution`` events
    (docs/events.md)."""

    status: str
    output: str
    expected: str | None
    passed: bool
    message: str = ""
    verification: dict[str, Any] | None = None
    seconds: float | None = None
    memory_kb: int | None = None
    traced: bool = False
    result: ExecutionResult | None = field(default=None, repr=False, compare=False)  # not in events

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("result")
        return data


async def run_for_real(
    executor: Executor,
    kind: Kind,
    program: Program,
    expected: str | None,
    nlex: str | None = None,
    *,
    tolerance: float | None = None,
    trace: bool = True,
) -> RealRun:
    """Run ``program`` (traced when there is an NLEX to verify), judge it against ``expected`` and
    verify ``nlex`` against the real trace."""
    traced = trace or bool(nlex)
    result = await executor.execute(program, trace=traced)
    output = real_output(kind, result)
    passed = result.status == "ok" and expected is not None and matches(kind, expected, output, tolerance)
    verification = executor.verify(nlex, result, program).to_dict() if nlex else None
    ran = result.status != "invalid_input"  # a program the sandbox refused or could not start
    return RealRun(
        result.status, output, expected, passed, result.message, verification,
        seconds=round(result.duration_s, 4) if ran else None,
        memory_kb=result.peak_memory_kb if ran else None,
        traced=traced and ran,
        result=result,
    )  # fmt: skip


def program_for(problem: Problem, code: str, test: TestCase) -> Program:
    """The program that runs ``code`` on one test of the problem."""
    if problem.kind == "call":
        return Program(code=code, call=f"{problem.entry_point}({test.input})")
    return Program(code=code, stdin=test.input)


def real_output(kind: Kind, result: ExecutionResult) -> str:
    """What the program produced, as compared with the expected output (stdout, or the call's value
    repr); a failed run appends its status so the repair prompt shows it."""
    output = (result.value or "") if kind == "call" else result.stdout
    if result.status not in ("ok", "wrong_answer"):
        detail = result.message or (
            f"{result.exception.type}: {result.exception.message}" if result.exception else ""
        )
        separator = "\n" if output and not output.endswith("\n") else ""
        output = f"{output}{separator}[{result.status}] {detail}".strip()
    return output
