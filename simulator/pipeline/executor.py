"""The seam between the pipeline and real execution: run a program (optionally traced) and check a
model's NLEX claims against the real trace.

``LocalExecutor`` calls ``simulator.execution.run`` (sandboxed, in a worker thread so the event loop
keeps streaming) and ``simulator.nlex``'s claim checker. Unit tests pass a double with the same two
methods instead.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from simulator.execution.program import Program
from simulator.execution.result import ExecutionResult
from simulator.problem import Problem, TestCase


class ExecutorUnavailable(RuntimeError):
    """Real execution was asked for but the runner is not installed/importable."""


@dataclass
class ClaimReport:
    """What checking one NLEX against a trace found: every claim (as the checker reports it), the
    first one the real trace contradicts (None when none did), or why nothing could be checked."""

    claims: list[dict[str, Any]] = field(default_factory=list)
    divergence: dict[str, Any] | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"claims": self.claims, "divergence": self.divergence, "error": self.error}


class Executor(Protocol):
    async def execute(self, program: Program, *, trace: bool) -> ExecutionResult: ...

    def check(self, nlex: str, trace: Any, program: Program) -> ClaimReport: ...


class LocalExecutor:
    """Runs programs with ``simulator.execution.run`` and checks claims with ``simulator.nlex``."""

    async def execute(self, program: Program, *, trace: bool) -> ExecutionResult:
        try:
            from simulator.execution import run as run_program
        except ImportError as exc:
            raise ExecutorUnavailable(f"real execution is not available here: {exc}") from exc
        return await asyncio.to_thread(run_program, program, trace=trace)

    def check(self, nlex: str, trace: Any, program: Program) -> ClaimReport:
        if trace is None:
            return ClaimReport(error="no trace was recorded")
        try:
            from simulator.execution.divergence import first_divergence
            from simulator.nlex import check_text, program_names
        except ImportError as exc:
            return ClaimReport(error=f"claim checking is not available here: {exc}")
        try:
            result = check_text(nlex, trace, program_names(program.code))
            return report_from(result, first_divergence(result, trace))
        except Exception as exc:  # a checker bug must not end the run
            return ClaimReport(error=f"claim checking failed: {type(exc).__name__}: {exc}")


def report_from(result: Any, divergence: Any) -> ClaimReport:
    """A ClaimReport from ``simulator.nlex.check.CheckResult`` and ``execution.divergence.Divergence``:
    each claim as {text, kind, line, verdict, ok (None when unverifiable), step, actual, reason}."""
    claims = [
        {
            "text": v.claim.text,
            "kind": v.claim.kind,
            "line": v.claim.line,
            "verdict": v.verdict,
            "ok": {"true": True, "false": False}.get(v.verdict),
            "step": v.step,
            "actual": v.actual,
            "reason": v.reason,
        }
        for v in result.verdicts
    ]
    first = None
    if divergence is not None:
        claim = divergence.claim
        first = {
            "step": divergence.step,
            "field": divergence.field,
            "expected": _plain(divergence.expected),
            "found": _plain(divergence.found),
            "claim": claim.text if claim is not None else None,
            "line": claim.line if claim is not None else None,
        }
    return ClaimReport(claims=claims, divergence=first)


def _plain(value: Any) -> Any:
    """JSON-safe: events are plain JSON."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def program_for(problem: Problem, code: str, test: TestCase) -> Program:
    """The program that runs ``code`` on one test of the problem."""
    if problem.kind == "call":
        return Program(code=code, call=f"{problem.entry_point}({test.input})")
    return Program(code=code, stdin=test.input)


def real_output(problem: Problem, result: ExecutionResult) -> str:
    """What the program produced, as compared with the expected output (stdout, or the call's value
    repr); a failed run appends its status so the repair prompt shows it."""
    output = (result.value or "") if problem.kind == "call" else result.stdout
    if result.status not in ("ok", "wrong_answer"):
        detail = result.message or (
            f"{result.exception.type}: {result.exception.message}" if result.exception else ""
        )
        separator = "\n" if output and not output.endswith("\n") else ""
        output = f"{output}{separator}[{result.status}] {detail}".strip()
    return output
