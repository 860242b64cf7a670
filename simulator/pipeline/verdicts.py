"""Judging programs on a problem's public tests, the verdicts selection and repair work from.

Each program is judged on each public test in one of three ways:

- simulated (the default): the model predicts the output (``Job.simulate``) and the prediction is
  compared with the expected one (``matching.problem_matches``); nothing runs, unless the run also
  runs for real (``RunSettings.real``), which records the real output beside the verdict and checks
  the NLEX claim by claim against the traced run;
- checked: a program known to fail without simulating it (``static.known_failure``: it does not
  parse, never defines the function, surely raises, is hard-coded) is judged wrong at once, and its
  verdict shows what a run of it would show;
- real (``RunSettings.oracle``): the program runs in the sandbox and its real output is judged, as a
  judge would; the oracle the papers compare with.

Every pair runs concurrently, at most ``RunSettings.concurrency`` at a time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from simulator.execution.program import Program
from simulator.pipeline.executor import RealRun, program_for, run_for_real
from simulator.pipeline.job import Job, since
from simulator.pipeline.matching import problem_matches
from simulator.pipeline.static import Failure, known_failure
from simulator.pipeline.stream import Emit
from simulator.problem import Problem, TestCase


@dataclass
class Verdict:
    """One program on one public test: whether its output matched the expected one."""

    match: bool
    output: str | None  # the output judged: simulated, or real in oracle mode
    nlex: str | None = None  # the simulation's text, checked against the real run
    known: bool = False  # judged wrong without a simulation (static.known_failure)


def matched(verdicts: list[Verdict]) -> int:
    return sum(v.match for v in verdicts)


class Judging:
    """Judges programs of one run on the problem's public tests, emitting verdicts as they come."""

    def __init__(self, job: Job, problem: Problem) -> None:
        self.job = job
        self.problem = problem
        self.settings = job.settings
        self.limit = asyncio.Semaphore(job.settings.concurrency)
        self.public = [(i, t) for i, t in enumerate(problem.tests) if t.public]

    @property
    def by(self) -> str:
        """What the verdicts come from, as the events and sentences say it."""
        return "real execution" if self.settings.oracle else "simulation"

    async def real(self, program: Program, expected: str, nlex: str | None) -> RealRun:
        """Run ``program`` for real, judge it against ``expected``, verify ``nlex`` (traced only then)."""
        return await run_for_real(
            self.job.executor, self.problem.kind, program, expected, nlex,
            tolerance=self.problem.float_tolerance, trace=nlex is not None,
        )  # fmt: skip

    async def all(
        self, codes: dict[int, str], turn: int, emit: Emit | None = None
    ) -> dict[int, list[Verdict]]:
        """Every program on every public test; the events go to ``emit`` (default the run's)."""
        emit = emit or self.job.emit
        name = "execute" if self.settings.oracle else "simulate"
        started = time.monotonic()
        emit("stage", stage=name, state="started", turn=turn)
        results = {c: [Verdict(False, None)] * len(self.public) for c in codes}
        async with asyncio.TaskGroup() as group:
            for candidate, code in codes.items():
                known = None if self.settings.oracle else known_failure(self.problem, code)  # once a program
                for slot, (index, test) in enumerate(self.public):
                    judging = self._one(candidate, code, known, index, test, turn, emit)
                    group.create_task(self._store(results[candidate], slot, judging))
        emit("stage", stage=name, state="finished", turn=turn, seconds=since(started))
        return results

    @staticmethod
    async def _store(verdicts: list[Verdict], slot: int, judging: Awaitable[Verdict]) -> None:
        verdicts[slot] = await judging

    async def _one(
        self,
        candidate: int,
        code: str,
        known: Failure | None,
        index: int,
        test: TestCase,
        turn: int,
        emit: Emit,
    ) -> Verdict:
        """One program on one public test: run (oracle mode), or judged wrong from ``known`` (why,
        ``static.known_failure``) without a simulation, or simulated."""
        program = program_for(self.problem, code, test)
        base = {"candidate": candidate, "test": index, "turn": turn, "expected": test.output}
        if self.settings.oracle:
            async with self.limit:
                real = await self.real(program, test.output, None)
            emit("verdict", **base, source="real", simulated=None, match=real.passed, real=real.to_dict())
            return Verdict(real.passed, real.output)
        if known is not None:  # known to fail without asking the model
            checked: dict[str, Any] = {**base, "source": "checked", "simulated": None, "match": False}
            if self.settings.real:
                async with self.limit:
                    checked["real"] = (await self.real(program, test.output, None)).to_dict()
            emit("verdict", **checked, reason=known.reason)
            return Verdict(False, known.output, known=True)  # what a run would show
        labels = {"candidate": candidate, "test": index, "turn": turn}
        async with self.limit:
            simulated = await self.job.simulate(
                code, self.problem.kind, test.input, program.call, labels, self.settings.narrate, emit
            )
        predicted = simulated.predicted
        match = problem_matches(self.problem, test.output, predicted)
        nlex = simulated.text
        payload: dict[str, Any] = {**base, "source": "simulated", "simulated": predicted, "match": match}
        if self.settings.real:
            async with self.limit:
                payload["real"] = (await self.real(program, test.output, nlex)).to_dict()
        emit("verdict", **payload)
        return Verdict(match, predicted, nlex)
