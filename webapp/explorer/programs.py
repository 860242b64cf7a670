"""From a run's stored rows to the Program that ran (or would run) a candidate on one test, and a
traced execution of it. Shared by the explorer ("open a candidate of a run") and the annotation queue
(each simulation is checked against the real trace of the program it simulated)."""

from __future__ import annotations

from typing import Any

from simulator.execution import Program, SandboxError
from simulator.execution import run as run_program
from simulator.execution.result import ExecutionResult
from simulator.pipeline.executor import program_for


class NoProgram(LookupError):
    """The run has no code for that candidate/turn, or no such test."""


def code_for(run: Any, candidate: int, turn: int = 0) -> str:
    """The code a simulation of ``candidate`` at repair ``turn`` was about."""
    if run.kind == "simulate":
        return run.code
    if turn > 0:
        repair = run.repair_turns.filter(turn=turn).first()
        code = (repair.code or repair.previous_code) if repair is not None else ""
    else:
        row = run.candidates.filter(index=candidate).first()
        code = row.code if row is not None else ""
    if not code:
        raise NoProgram(f"no code for candidate {candidate} (turn {turn}) in this run")
    return code


def program_for_run(run: Any, candidate: int, test: int, turn: int = 0) -> Program:
    """The program that runs ``candidate`` (after ``turn`` repairs) on test ``test`` of the run."""
    code = code_for(run, candidate, turn)
    if run.kind == "simulate":
        if run.settings.get("mode", "call") == "stdin":
            return Program(code=code, stdin=run.code_input)
        return Program(code=code, call=run.code_input)
    core = run.core_problem()
    if not 0 <= test < len(core.tests):
        raise NoProgram(f"the problem has no test {test}")
    return program_for(core, code, core.tests[test])


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
