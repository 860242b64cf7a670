"""Simulate one program on one input and check the model's NLEX against the real trace: what
``execsim simulate`` streams. Same events as a run (candidate 0, test 0):

run_started {program, settings, provenance} -> stage simulate -> simulation_delta* -> simulation_done
-> stage execute -> execution {..., predicted, verification, trace} -> run_finished
{predicted, real_output, match, verification, totals}.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict

from simulator.execution.program import Program
from simulator.llm.client import ModelClient
from simulator.pipeline.events import Event
from simulator.pipeline.executor import Executor, LocalExecutor, run_for_real
from simulator.pipeline.job import Job, RunFailure
from simulator.pipeline.settings import RunSettings
from simulator.pipeline.stream import stream_events
from simulator.problem import Kind


async def simulate_program(
    program: Program,
    settings: RunSettings,
    client: ModelClient,
    *,
    run_id: str | None = None,
    executor: Executor | None = None,
    cancel: asyncio.Event | None = None,
) -> AsyncIterator[Event]:
    """Events of simulating ``program`` (a call or a stdin program), narrated, then running it for
    real with a trace and checking the NLEX's claims against it."""
    job = _SimulationJob(program, settings, client, executor or LocalExecutor())
    events = stream_events(run_id or uuid.uuid4().hex, job.drive, cancel, job.cancel_requested)
    async with contextlib.aclosing(events):
        async for event in events:
            yield event


class _SimulationJob(Job):
    """One "Simulate my code" run: the user's program simulated next to its real, traced run."""

    def __init__(
        self, program: Program, settings: RunSettings, client: ModelClient, executor: Executor
    ) -> None:
        super().__init__(settings, client, executor)
        self.program = program

    async def body(self) -> None:
        program = self.program
        problems = program.problems()
        if program.shape == "tests" or problems:
            raise RunFailure(
                "invalid_program", "; ".join(problems) or "simulate needs a call or a stdin input"
            )
        kind: Kind = "call" if program.call is not None else "stdin"
        record, error = await self.provenance()
        shown = {"code": program.code, "call": program.call, "stdin": program.stdin}
        self.emit("run_started", program=shown, settings=self.settings_record(), provenance=record)
        if error is not None:
            raise error
        started = time.monotonic()
        self.stage("simulate", "started")
        labels = {"candidate": 0, "test": 0, "turn": 0}
        simulated = await self.simulate(  # this mode is for the narration: always narrated
            program.code, kind, program.stdin or "", program.call, labels, narrate=True
        )
        predicted, nlex = simulated.predicted, simulated.text
        self.stage("simulate", "finished", seconds=round(time.monotonic() - started, 3))

        started = time.monotonic()
        self.stage("execute", "started", final=True)
        real = await run_for_real(self.executor, kind, program, predicted, nlex)
        result = real.result
        assert result is not None
        trace = result.trace.to_dict() if hasattr(result.trace, "to_dict") else None
        self.emit(
            "execution", candidate=0, test=0, public=True, predicted=predicted, trace=trace, **real.to_dict()
        )
        self.stage("execute", "finished", final=True, seconds=round(time.monotonic() - started, 3))
        self.emit(
            "run_finished",
            predicted=predicted,
            real_output=real.output,
            status=result.status,
            match=real.passed,
            verification=real.verification,
            exception=asdict(result.exception) if result.exception else None,
            totals=self.totals(),
        )
