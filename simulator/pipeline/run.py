"""The pipeline: solve -> simulate -> select (Best@k) -> repair (Self-RLEF) -> execute, as events.

``run()`` is an async generator of ``Event``s (see ``events`` and docs/events.md); the CLI prints them,
the web app persists and forwards them, the evaluation aggregates them. What happens, in order:

1. solve: one request with ``n=k`` samples, each streamed (``candidate_delta``) and parsed for a code
   block (``candidate_done``);
2. judge: every candidate on every public test (``verdicts``): simulated by the model, narrated by
   default; a program known to fail is judged wrong without a simulation; in oracle mode the
   programs run for real instead;
3. select: most matching public tests wins (``selection.best_of``); a tie never goes to a program
   known to fail while a tied one is not, then to the program written most often, then to a
   ``random.Random(seed)``;
4. repair: up to ``turns`` turns (``repair``), every new program judged as the candidates were;
5. execute (``real``): the final program on all tests, public and private, with a trace.

Failures end the run with ``run_failed`` (server down, unknown model, no code at all); a prompt that
does not fit one simulation or repair is recorded on that item and the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from simulator.llm.client import ModelClient
from simulator.pipeline.events import Event
from simulator.pipeline.executor import Executor, LocalExecutor, RealRun, program_for
from simulator.pipeline.job import Job, RunFailure, noting_cut, since
from simulator.pipeline.real_execution import in_page_order
from simulator.pipeline.repair import Repaired, repair_program
from simulator.pipeline.selection import best_of
from simulator.pipeline.settings import RunSettings
from simulator.pipeline.stream import stream_events
from simulator.pipeline.verdicts import Judging, Verdict, matched
from simulator.problem import Problem, TestCase
from simulator.prompts import solve
from simulator.source import agreement_counts, first_same


async def run(
    problem: Problem,
    settings: RunSettings,
    client: ModelClient,
    *,
    run_id: str | None = None,
    executor: Executor | None = None,
    cancel: asyncio.Event | None = None,
    code: str | None = None,
) -> AsyncIterator[Event]:
    """Solve ``problem``; yields events ending with exactly one run_finished/run_failed/run_cancelled.
    With ``code`` (the user's own program: "Simulate my code" against a problem) nothing is asked of the
    model for the solution: ``code`` is candidate 0 (its ``candidate_done`` has ``given: true``), and
    the run simulates, selects, repairs and executes it as it would a sampled candidate."""
    job = _SolveJob(problem, settings, client, executor or LocalExecutor(), given=code)
    events = stream_events(run_id or uuid.uuid4().hex, job.drive, cancel, job.cancel_requested)
    async with contextlib.aclosing(events):
        async for event in events:
            yield event


class _SolveJob(Job):
    """One solve run: candidates, their verdicts, selection, repair turns, the final execution."""

    def __init__(
        self,
        problem: Problem,
        settings: RunSettings,
        client: ModelClient,
        executor: Executor,
        given: str | None,
    ) -> None:
        super().__init__(settings, client, executor)
        self.problem = problem
        self.given = given
        self.rng = random.Random(self.seed)
        self.judging = Judging(self, problem)

    async def body(self) -> None:
        record, error = await self.provenance()
        self.emit(
            "run_started", problem=self.problem.to_dict(), settings=self.settings_record(), provenance=record
        )
        if error is not None:
            raise error
        codes = self._given(self.given) if self.given is not None else await self._solve()
        if not codes:
            raise RunFailure(
                "no_code", f"none of the {self.settings.k} candidates contained a ```python code block"
            )
        verdicts = await self.judging.all(codes, turn=0)
        chosen = self._select(codes, verdicts)
        final = await repair_program(self, self.judging, chosen, codes[chosen], verdicts[chosen])
        real = await self._execute_final(chosen, final) if self.settings.real else None
        self.emit(
            "run_finished",
            candidate=chosen,
            code=final.code,
            passed_public_simulated=matched(final.verdicts),
            public_tests=len(self.judging.public),
            judged_by=self.judging.by,
            turns_used=final.asked,
            submitted=final.submitted,
            seed=self.seed,
            real=real,
            totals=self.totals(),
        )

    # -- 1. solve --------------------------------------------------------------------------------

    def _given(self, given: str) -> dict[int, str]:
        """The user's program (``given``) as candidate 0 (no solve request)."""
        code = given if given.endswith("\n") else f"{given}\n"
        self.emit("candidate_done", candidate=0, text=code, code=code, parse_error=None, tokens=0,
                  finish_reason="given", given=True)  # fmt: skip
        return {0: code}

    async def _solve(self) -> dict[int, str]:
        started = time.monotonic()
        self.stage("solve", "started")

        def on_delta(index: int, text: str) -> None:
            self.emit("candidate_delta", candidate=index, text=text)

        result = await self.chat(
            solve.messages(self.problem),
            n=self.settings.k,
            stop=solve.STOP,
            on_delta=on_delta,
            repetition=solve.LOOP_STOP,
        )
        codes: dict[int, str] = {}
        for choice in result.choices:
            parsed = solve.parse(choice.text)
            self.emit(
                "candidate_done",
                candidate=choice.index,
                text=choice.text,
                code=parsed.code,
                parse_error=noting_cut(parsed.error, choice.finish_reason, self.room(result)),
                tokens=choice.deltas,
                finish_reason=choice.finish_reason,
            )
            if parsed.code is not None:
                codes[choice.index] = parsed.code
        self.stage("solve", "finished", seconds=since(started), tokens=result.completion_tokens)
        return codes

    # -- 3. select ---------------------------------------------------------------------------------

    def _select(self, codes: dict[int, str], verdicts: dict[int, list[Verdict]]) -> int:
        self.stage("select", "started")
        scores = {c: matched(vs) for c, vs in verdicts.items()}
        top = max(scores.values())
        tied = [c for c, score in scores.items() if score == top]
        known = {c for c in tied if any(v.known for v in verdicts[c])}  # as the verdicts were judged
        agreement, same_as = None, None
        if len(tied) > 1:
            programs, kind = list(codes.values()), self.problem.kind
            counts = dict(zip(codes, agreement_counts(programs, kind), strict=True))
            agreement = {c: counts[c] for c in tied}
            firsts = [list(codes)[i] for i in first_same(programs, kind)]
            same_as = dict(zip(codes, firsts, strict=True))
        selection = best_of(
            scores,
            self.rng,
            tests=len(self.judging.public),
            source=self.judging.by,
            known=known,
            agreement=agreement,
            same_as=same_as,
        )
        extra: dict[str, Any] = {}
        if agreement is not None:
            extra["agreement"] = [agreement.get(c) for c in range(self.settings.k)]
        self.emit(
            "selected",
            candidate=selection.candidate,
            scores=[scores.get(c) for c in range(self.settings.k)],
            tied=list(selection.tied),
            broken_by=list(selection.broken_by),
            seed=self.seed,
            reason=selection.reason,
            **extra,
        )
        self.stage("select", "finished")
        return selection.candidate

    # -- 5. execute the final program for real --------------------------------------------------------

    async def _execute_final(self, chosen: int, final: Repaired) -> dict[str, Any]:
        started = time.monotonic()
        self.stage("execute", "started", final=True)
        public = self.judging.public
        nlex_by_test = {index: v.nlex for (index, _), v in zip(public, final.verdicts, strict=True)}
        passed = {"public": 0, "private": 0}

        async def one(index: int, test: TestCase) -> RealRun:
            async with self.judging.limit:
                return await self.judging.real(
                    program_for(self.problem, final.code, test), test.output, nlex_by_test.get(index)
                )

        ordered = in_page_order(self.problem.tests)
        async with asyncio.TaskGroup() as group:
            runs = [group.create_task(one(index, test)) for index, test in ordered]
        label = {"candidate": chosen, "turn": final.turn, "final": True}
        for (index, test), task in zip(ordered, runs, strict=True):  # in the page's order
            real = task.result()
            passed["public" if test.public else "private"] += real.passed
            self.emit("execution", **label, test=index, public=test.public, **real.to_dict())
        self.stage("execute", "finished", final=True, seconds=since(started))
        return {
            "passed_public": passed["public"],
            "public_tests": len(public),
            "passed_private": passed["private"],
            "private_tests": len(self.problem.tests) - len(public),
        }
