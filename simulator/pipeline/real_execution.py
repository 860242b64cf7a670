"""Run a finished run's programs for real: "Run for real" after the fact.

``execute_programs(problem, programs, run_id=, start_seq=)`` executes every given program (the sampled
candidates and the repaired final program) in the sandbox, with a line tracer, on **all** tests of the
problem (public and private), and verifies each program's stored NLEX of a public test against the
real trace (``executor.run_for_real``, the step ``run()`` uses for ``settings.real``). It is an
async generator of the pipeline's own events, numbered from ``start_seq`` so that a host can append
them to a run's existing log (docs/events.md, "Run for real"):

    stage {stage: execute, state: started, rerun: true, programs}
    execution x len(programs) x len(tests)   (per program, public tests first, in test order)
    stage {stage: execute, state: finished, rerun: true, seconds, results, cancelled?, error?}

It emits no final event: the run already ended with one. Failures of the code are data (an
``execution`` with its status); an executor that cannot run at all ends the stage with ``error``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulator.pipeline.events import Event, Sequencer
from simulator.pipeline.executor import (
    Executor,
    ExecutorUnavailable,
    LocalExecutor,
    program_for,
    run_for_real,
)
from simulator.problem import Problem, TestCase


@dataclass(frozen=True)
class RealProgram:
    """One program of a run to execute: a sampled candidate (``turn`` 0) or the program after repair
    turn ``turn`` (``final`` marks the run's final program). ``nlex`` maps a public test's index to the
    NLEX whose prediction was judged on it (the one checked against the real trace)."""

    candidate: int
    code: str
    turn: int = 0
    final: bool = False
    nlex: Mapping[int, str] = field(default_factory=dict)

    @property
    def label(self) -> dict[str, Any]:
        return {"candidate": self.candidate, "turn": self.turn, "final": self.final}


async def execute_programs(
    problem: Problem,
    programs: Sequence[RealProgram],
    *,
    run_id: str,
    start_seq: int = 0,
    executor: Executor | None = None,
    concurrency: int = 4,
    cancel: asyncio.Event | None = None,
) -> AsyncIterator[Event]:
    """Events of executing ``programs`` on every test of ``problem`` (see the module docstring).
    ``cancel`` is checked between executions: the remaining ones are dropped and the stage ends with
    ``cancelled: true``. A consumer that stops iterating stops the executions in flight."""
    executor = executor or LocalExecutor()
    emit = Sequencer(run_id)
    emit.next_seq = start_seq
    started = time.monotonic()
    yield emit("stage", stage="execute", state="started", rerun=True, programs=[p.label for p in programs])

    limit = asyncio.Semaphore(max(1, concurrency))
    results = {(p.candidate, p.turn): _Tally(p) for p in programs}

    async def one(program: RealProgram, index: int, test: TestCase) -> dict[str, Any]:
        async with limit:
            return await _execute_one(executor, problem, program, index, test)

    tasks = [
        asyncio.create_task(one(program, index, test))
        for program in programs
        for index, test in in_page_order(problem.tests)
    ]
    outcome: dict[str, Any] = {}
    pending = set(tasks)
    shown = 0  # events go out in the page's order (program, public first, test), as each is ready
    try:
        while shown < len(tasks) and not outcome:
            if cancel is not None and cancel.is_set():
                outcome["cancelled"] = True
                break
            if not tasks[shown].done():
                _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            while shown < len(tasks) and tasks[shown].done() and not outcome:
                error = tasks[shown].exception()
                if isinstance(error, ExecutorUnavailable):
                    outcome["error"] = str(error)
                elif error is not None:  # an executor bug: end the stage with it, as data
                    outcome["error"] = f"internal_error: {type(error).__name__}: {error}"
                if outcome:
                    break
                payload = tasks[shown].result()
                shown += 1
                results[(payload["candidate"], payload["turn"])].add(payload)
                yield emit("execution", **payload)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    yield emit(
        "stage",
        stage="execute",
        state="finished",
        rerun=True,
        seconds=round(time.monotonic() - started, 3),
        results=[tally.to_dict() for tally in results.values()],
        **outcome,
    )


async def _execute_one(
    executor: Executor, problem: Problem, program: RealProgram, index: int, test: TestCase
) -> dict[str, Any]:
    """One program on one test; its NLEX (public tests) verified against the real trace."""
    nlex = program.nlex.get(index) if test.public else None
    real = await run_for_real(
        executor, problem.kind, program_for(problem, program.code, test), test.output, nlex,
        tolerance=problem.float_tolerance, trace=nlex is not None,
    )  # fmt: skip
    return {**program.label, "test": index, "public": test.public, **real.to_dict()}


def in_page_order(tests: Sequence[TestCase]) -> list[tuple[int, TestCase]]:
    """(index, test) with the public tests first, each group in the problem's order: the order the
    run page lists real executions in, so rows arrive where a reload would put them."""
    return sorted(enumerate(tests), key=lambda item: (not item[1].public, item[0]))


@dataclass
class _Tally:
    """Per program: tests passed (public, private) and the first public test whose NLEX diverged."""

    program: RealProgram
    passed_public: int = 0
    public_tests: int = 0
    passed_private: int = 0
    private_tests: int = 0
    first_divergence: int | None = None

    def add(self, payload: dict[str, Any]) -> None:
        if payload["public"]:
            self.public_tests += 1
            self.passed_public += payload["passed"]
            diverged = (payload.get("verification") or {}).get("first_divergence") is not None
            if diverged and (self.first_divergence is None or payload["test"] < self.first_divergence):
                self.first_divergence = payload["test"]
        else:
            self.private_tests += 1
            self.passed_private += payload["passed"]

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.program.label,
            "passed_public": self.passed_public,
            "public_tests": self.public_tests,
            "passed_private": self.passed_private,
            "private_tests": self.private_tests,
            "first_divergence": self.first_divergence,
        }
