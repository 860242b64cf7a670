"""The pipeline: solve -> simulate -> select (Best@k) -> repair (Self-RLEF) -> execute, as events.

``run()`` is an async generator of ``Event``s (see ``events`` and docs/events.md); the CLI prints them,
the web app persists and forwards them, the evaluation aggregates them. What happens, in order:

1. solve: one request with ``n=k`` samples, each streamed (``candidate_delta``) and parsed for a code
   block (``candidate_done``);
2. simulate: every candidate x public test, concurrently (at most ``concurrency`` at a time), each one
   greedy simulation or ``sims`` samples from one request (majority vote); in oracle mode the programs
   run for real instead; with ``real`` each verdict also records the real output and the first NLEX
   claim the trace refutes; a program known to fail without simulating it, or hard-coded
   (``static.known_failure`` says which and why), is judged wrong (``source: checked``) and not
   simulated; the repair prompt shows what a run of it would show (the literal it returns,
   ``[runtime_error] NameError: ...``), as for a simulated output;
3. select: most matching public tests wins; a tie never goes to a program known to fail while a
   tied one is not, then to ``ties`` (agreement by default), then a ``random.Random(seed)``;
4. repair: up to ``turns`` turns of a repair request with the attempt's feedback; every new program is
   simulated (or run, in oracle mode) on the public tests, labelled with its ``turn``.
   ``settings.repair`` says who decides: ``model``, the model's free reply (stops on ``#SUBMIT``);
   ``guided`` (the default), a program matching every public test is submitted without asking,
   otherwise the solve request told what the attempt got wrong asks for ``fixes`` programs, the usable
   one whose verdicts match the most public tests is the fix, and it is kept only when it matches
   more public tests than the attempt (sampling, a turn that kept none asks again at the next turn);
5. execute (``real``): the final program on all tests, public and private, with a trace.

Failures end the run with ``run_failed`` (server down, unknown model, no code at all); a prompt that
does not fit one simulation or repair is recorded on that item and the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from simulator.execution.program import Program
from simulator.llm.client import ChatClient, ChatResult, Choice, ModelInfo
from simulator.llm.errors import (
    LLMError,
    LLMRejected,
    LLMTimeout,
    LLMUnavailable,
    MalformedReply,
    ModelNotFound,
    PromptTooLong,
)
from simulator.pipeline import provenance
from simulator.pipeline.events import Event
from simulator.pipeline.executor import (
    Executor,
    ExecutorUnavailable,
    LocalExecutor,
    RealRun,
    program_for,
    run_for_real,
)
from simulator.pipeline.matching import majority, problem_matches, vote_key
from simulator.pipeline.real_execution import in_page_order
from simulator.pipeline.selection import best_of
from simulator.pipeline.settings import RunSettings
from simulator.pipeline.static import Failure, cannot_pass, known_failure
from simulator.pipeline.stream import Emit, stream_events
from simulator.problem import Problem, TestCase
from simulator.prompts import repair, simulate, solve
from simulator.prompts.parsing import (
    REPEATED,
    RepairParse,
    parse_call_answer,
    parse_repair,
    parse_stdin_answer,
)
from simulator.source import agreement_counts, same_program

log = logging.getLogger(__name__)
DELTA_INTERVAL_S = 0.1  # the most often one sample's streamed text becomes an event

ERROR_CODES: dict[type[Exception], str] = {
    LLMTimeout: "model_timeout",
    LLMUnavailable: "model_unavailable",
    ModelNotFound: "model_not_found",
    MalformedReply: "malformed_reply",
    PromptTooLong: "prompt_too_long",
    LLMRejected: "model_rejected",
    LLMError: "model_error",
    ExecutorUnavailable: "executor_unavailable",
}


class DeltaBuffer:
    """Coalesces streamed text per sample: at most one delta event per sample every ``interval`` seconds
    (the first at once). Token-by-token events would cost every host a database row and a broadcast per
    token; a tenth of a second still reads as live."""

    def __init__(self, emit: Callable[[int, str], None], interval: float = DELTA_INTERVAL_S) -> None:
        self.emit, self.interval = emit, interval
        self.pending: dict[int, str] = {}
        self.last: dict[int, float] = {}

    def add(self, index: int, text: str) -> None:
        self.pending[index] = self.pending.get(index, "") + text
        now = time.monotonic()
        if now - self.last.get(index, -self.interval) >= self.interval:
            self.last[index] = now
            self.emit(index, self.pending.pop(index))

    def flush(self) -> None:
        for index in sorted(self.pending):
            self.emit(index, self.pending.pop(index))


class RunFailure(Exception):
    """The run cannot go on; ``error`` is the code recorded in ``run_failed``."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


async def run(
    problem: Problem,
    settings: RunSettings,
    client: ChatClient,
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


@dataclass
class _Verdict:
    match: bool
    output: str | None  # the output judged: simulated (majority) or real in oracle mode
    nlex: str | None = None  # the NLEX whose prediction won the vote
    known: bool = False  # judged wrong without a simulation (static.known_failure)


@dataclass(frozen=True)
class _Judged:
    """A guided fix judged on the public tests, with the events that judging would have sent."""

    verdicts: list[_Verdict]
    events: list[tuple[str, dict[str, Any]]]

    @property
    def matched(self) -> int:
        return sum(v.match for v in self.verdicts)


@dataclass(frozen=True)
class _Fix:
    """One reply to a guided repair request, read: ``known`` says why its new program cannot pass."""

    index: int
    text: str
    parsed: RepairParse
    known: str | None


class Job:
    """What the pipeline's drivers share: the client, the settings, emitting, failure handling."""

    def __init__(self, settings: RunSettings, client: ChatClient, executor: Executor) -> None:
        self.settings = settings
        self.client = client
        self.executor = executor
        self.model = settings.model or client.model
        self.seed = settings.seed if settings.seed is not None else secrets.randbelow(2**31)
        self.cancel_reason = "cancelled"
        self.tokens = 0
        self.requests = 0
        self.started = time.monotonic()
        self.emit: Emit = _unset_emit

    def cancel_requested(self) -> None:
        self.cancel_reason = "cancelled on request"

    async def drive(self, emit: Emit) -> None:
        """Run ``body()`` and turn every way it can end into exactly one final event."""
        self.emit = emit
        self.started = time.monotonic()
        try:
            await self.body()
        except asyncio.CancelledError:
            emit("run_cancelled", reason=self.cancel_reason)
        except Exception as exc:  # every failure becomes data: run_failed
            root = _root(exc)
            if isinstance(root, RunFailure):
                emit("run_failed", error=root.error, message=root.message)
            elif isinstance(root, LLMError | ExecutorUnavailable):
                code = next(code for kind, code in ERROR_CODES.items() if isinstance(root, kind))
                emit("run_failed", error=code, message=str(root))
            else:
                log.exception("pipeline run failed unexpectedly")
                emit("run_failed", error="internal_error", message=f"{type(root).__name__}: {root}")

    async def body(self) -> None:
        raise NotImplementedError

    async def provenance(self) -> tuple[dict[str, Any], LLMError | None]:
        """Provenance (asking the server which model it serves); a failure is returned, to be raised
        after ``run_started`` so that every run starts the same way."""
        info: ModelInfo | None = None
        error: LLMError | None = None
        try:
            info = await self.client.model_info(self.model)
        except LLMError as exc:
            error = exc
        sampling = {
            "temperature": self.settings.temperature,
            "top_p": self.settings.top_p,
            "max_tokens": self.settings.max_tokens,
            "k": self.settings.k,
            "sims": self.settings.sims,
        }
        record = provenance.collect(
            model=self.model, server=self.client.base_url, info=info, sampling=sampling, seed=self.seed
        )
        return record, error

    def settings_record(self) -> dict[str, Any]:
        return {**self.settings.to_dict(), "seed": self.seed, "model": self.model}

    def stage(self, name: str, state: str, **extra: Any) -> None:
        self.emit("stage", stage=name, state=state, **extra)

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        n: int,
        stop: Sequence[str] | None = None,
        max_tokens: int | None = None,
        on_delta: Callable[[int, str], None],
        repetition: Mapping[str, int] | None = None,
        temperature: float | None = None,
    ) -> ChatResult:
        """One request at the run's sampling settings (``temperature`` overrides the run's)."""
        self.requests += 1
        deltas = DeltaBuffer(on_delta)
        try:
            result = await self.client.chat(
                messages,
                n=n,
                temperature=self.settings.temperature if temperature is None else temperature,
                top_p=self.settings.top_p,
                max_tokens=max_tokens or self.settings.max_tokens,
                stop=stop,
                model=self.model,
                on_delta=deltas.add,
                repetition=repetition,
            )
        finally:
            deltas.flush()
        self.tokens += result.completion_tokens
        return result

    @property
    def simulation_temperature(self) -> float:
        """One simulation is greedy: the model's likeliest run, the same verdict each time, and the
        one ``execsim eval mbpp`` measures Best@k with; ``sims`` > 1 samples vote at the run's
        temperature. As judges of MBPP dev attempts the two were as good (docs/results.md, Issue 12
        section 23)."""
        return 0.0 if self.settings.sims == 1 else self.settings.temperature

    async def simulate_samples(
        self,
        code: str,
        kind: str,
        input: str,
        call: str | None,
        labels: dict[str, Any],
        narrate: bool,
        emit: Emit | None = None,
    ) -> tuple[list[str | None], list[str]]:
        """``sims`` simulations of one program on one input (one request); emits simulation_delta and
        simulation_done with ``labels`` (to ``emit``, default the run's); returns the predictions (None
        on parse failure) and texts. ``narrate``: an NLEX, then the answer; else the answer at once
        (``simulate.answer_prefill``)."""
        emit = emit or self.emit
        messages, stop, call = _simulate_request(code, kind, input, call)
        n = self.settings.sims

        def on_delta(sample: int, text: str) -> None:
            emit("simulation_delta", **labels, sample=sample, text=text)

        try:
            if narrate:
                result = await self.chat(
                    messages, n=n, stop=stop, on_delta=on_delta, temperature=self.simulation_temperature
                )
                replies = await asyncio.gather(
                    *(self.finish(messages, choice, stop, call, on_delta) for choice in result.choices)
                )
            else:
                replies = await self.answer(messages, range(n), stop, call, on_delta)
        except PromptTooLong as exc:
            for sample in range(n):
                emit(
                    "simulation_done",
                    **labels,
                    sample=sample,
                    text="",
                    predicted=None,
                    parse_error=f"prompt too long: {exc}",
                    tokens=0,
                )
            return [None] * n, [""] * n
        predictions: list[str | None] = []
        for sample, (text, tokens, cut, forced) in enumerate(replies):
            parsed = parse_call_answer(text, call) if call is not None else parse_stdin_answer(text)
            error = parsed.error
            if error and forced:
                how = "hit the token budget" if cut else "stopped before its answer"
                asked = "at once" if cut else "after it"
                error += f" (the narration {how}; the answer was then asked for {asked})"
            else:
                error = _noting_cut(error, "length" if cut else None)
            emit(
                "simulation_done",
                **labels,
                sample=sample,
                text=text,
                predicted=parsed.predicted,
                parse_error=error,
                tokens=tokens,
                cut=cut,
                forced=forced,
                copied=simulate.copied(parsed.predicted, input) if call is None else None,
            )
            predictions.append(parsed.predicted)
        return predictions, [reply[0] for reply in replies]

    async def answer(
        self,
        messages: list[dict[str, str]],
        samples: Sequence[int],
        stop: Sequence[str],
        call: str | None,
        on_delta: Callable[[int, str], None],
        turn: str = "",
        shown: str = "",
    ) -> list[tuple[str, int, bool, bool]]:
        """The answer at once (``simulate.answer_prefill``), or as ``turn`` asks for it (the assistant
        turn of a forced answer, ``simulate.forced_answer``), one per sample: (text, tokens, cut,
        forced=False), each text beginning with ``shown`` (by default the prefill), which streams as
        the start of each reply once the reply has begun."""
        if not turn:
            turn = shown = simulate.answer_prefill(call)
        begun: set[int] = set()

        def stream(index: int, text: str) -> None:
            if index not in begun:
                begun.add(index)
                text = shown + text
            on_delta(samples[index], text)

        result = await self.chat(
            [*messages, {"role": "assistant", "content": turn}],
            n=len(samples),
            stop=stop,
            max_tokens=simulate.ANSWER_TOKENS,
            on_delta=stream,
            temperature=self.simulation_temperature,
        )
        return [(shown + c.text, c.deltas, c.finish_reason == "length", False) for c in result.choices]

    async def finish(
        self,
        messages: list[dict[str, str]],
        choice: Choice,
        stop: Sequence[str],
        call: str | None,
        on_delta: Callable[[int, str], None],
    ) -> tuple[str, int, bool, bool]:
        """A narrated simulation as (text, tokens, cut, forced): a narration that ends before its answer
        (cut by the token budget, or stopped) gets that answer asked for (``simulate.forced_answer``),
        its reply streamed on after it as more of the same sample."""
        cut = choice.finish_reason == "length"
        if simulate.answered(choice.text, call):
            return choice.text, choice.deltas, cut, False
        turn, shown = simulate.forced_answer(choice.text, call, cut)
        try:
            ((text, tokens, _, _),) = await self.answer(
                messages, [choice.index], stop, call, on_delta, turn, shown
            )
        except PromptTooLong:  # no room left in the context: the reply stays without an answer
            return choice.text, choice.deltas, cut, False
        return choice.text + text, choice.deltas + tokens, cut, True

    def totals(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "requests": self.requests,
            "seconds": round(time.monotonic() - self.started, 3),
        }


class _SolveJob(Job):
    """One solve run: candidates, simulations, selection, repair turns, the final execution."""

    def __init__(
        self,
        problem: Problem,
        settings: RunSettings,
        client: ChatClient,
        executor: Executor,
        given: str | None,
    ) -> None:
        super().__init__(settings, client, executor)
        self.problem = problem
        self.given = given
        self.rng = random.Random(self.seed)
        self.limit = asyncio.Semaphore(settings.concurrency)
        self.public = [(i, t) for i, t in enumerate(problem.tests) if t.public]
        self.code_turn = 0  # the repair turn that wrote the current program (0: the sampled candidate)

    async def body(self) -> None:
        record, error = await self.provenance()
        self.emit(
            "run_started", problem=self.problem.to_dict(), settings=self.settings_record(), provenance=record
        )
        if error is not None:
            raise error
        codes = self._given() if self.given is not None else await self._solve()
        if not codes:
            raise RunFailure(
                "no_code", f"none of the {self.settings.k} candidates contained a ```python code block"
            )
        verdicts = await self._judge_all(codes, turn=0)
        chosen = await self._select(codes, verdicts)
        code, final, turns_used, submitted = await self._repair(chosen, codes[chosen], verdicts[chosen])
        real = await self._execute_final(chosen, code, final) if self.settings.real else None
        self.emit(
            "run_finished",
            candidate=chosen,
            code=code,
            passed_public_simulated=sum(v.match for v in final),
            public_tests=len(self.public),
            judged_by="real execution" if self.settings.oracle else "simulation",
            turns_used=turns_used,
            submitted=submitted,
            seed=self.seed,
            real=real,
            totals=self.totals(),
        )

    async def real(self, program: Program, expected: str, nlex: str | None) -> RealRun:
        """Run ``program`` for real, judge it against ``expected``, verify ``nlex`` (traced only then)."""
        return await run_for_real(
            self.executor, self.problem.kind, program, expected, nlex,
            tolerance=self.problem.float_tolerance, trace=nlex is not None,
        )  # fmt: skip

    # -- 1. solve --------------------------------------------------------------------------------

    def _given(self) -> dict[int, str]:
        """The user's program as candidate 0 (no solve request)."""
        code = self.given if (self.given or "").endswith("\n") else f"{self.given}\n"
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
            error = _noting_cut(parsed.error, choice.finish_reason, self._room(result))
            self.emit(
                "candidate_done",
                candidate=choice.index,
                text=choice.text,
                code=parsed.code,
                parse_error=error,
                tokens=choice.deltas,
                finish_reason=choice.finish_reason,
            )
            if parsed.code is not None:
                codes[choice.index] = parsed.code
        self.stage("solve", "finished", seconds=_since(started), tokens=result.completion_tokens)
        return codes

    # -- 2. simulate (or run, in oracle mode) every program on every public test ----------------------

    async def _judge_all(
        self, codes: dict[int, str], turn: int, emit: Emit | None = None
    ) -> dict[int, list[_Verdict]]:
        """Every program on every public test; the events go to ``emit`` (default the run's)."""
        emit = emit or self.emit
        name = "execute" if self.settings.oracle else "simulate"
        started = time.monotonic()
        emit("stage", stage=name, state="started", turn=turn)
        results: dict[int, list[_Verdict]] = {c: [_Verdict(False, None)] * len(self.public) for c in codes}
        async with asyncio.TaskGroup() as group:
            for candidate, code in codes.items():
                known = None if self.settings.oracle else known_failure(self.problem, code)  # once a program
                for slot, (index, test) in enumerate(self.public):
                    judging = self._judge(candidate, code, known, slot, index, test, turn, results, emit)
                    group.create_task(judging)
        emit("stage", stage=name, state="finished", turn=turn, seconds=_since(started))
        return results

    async def _judge(
        self,
        candidate: int,
        code: str,
        known: Failure | None,
        slot: int,
        index: int,
        test: TestCase,
        turn: int,
        results: dict[int, list[_Verdict]],
        emit: Emit,
    ) -> None:
        """One program on one public test: run (oracle mode), or judged wrong from ``known`` (why,
        ``static.known_failure``) without a simulation, or simulated."""
        program = program_for(self.problem, code, test)
        base = {"candidate": candidate, "test": index, "turn": turn, "expected": test.output}
        if self.settings.oracle:
            async with self.limit:
                real = await self.real(program, test.output, None)
            emit("verdict", **base, source="real", simulated=None, match=real.passed, real=real.to_dict())
            results[candidate][slot] = _Verdict(real.passed, real.output)
            return
        if known is not None:  # known to fail without asking the model
            checked: dict[str, Any] = {**base, "source": "checked", "simulated": None, "match": False}
            if self.settings.real:
                async with self.limit:
                    checked["real"] = (await self.real(program, test.output, None)).to_dict()
            emit("verdict", **checked, reason=known.reason)
            results[candidate][slot] = _Verdict(False, known.output, known=True)  # what a run would show
            return
        labels = {"candidate": candidate, "test": index, "turn": turn}
        async with self.limit:
            predictions, texts = await self.simulate_samples(
                code, self.problem.kind, test.input, program.call, labels, self.settings.narrate, emit
            )
        winner, tally = majority(self.problem.kind, predictions)
        match = problem_matches(self.problem, test.output, winner)
        nlex = _winning_text(self.problem.kind, winner, predictions, texts)
        payload: dict[str, Any] = {**base, "source": "simulated", "simulated": winner, "match": match}
        if self.settings.sims > 1:
            payload["votes"] = tally
        if self.settings.real:
            async with self.limit:
                payload["real"] = (await self.real(program, test.output, nlex or "")).to_dict()
        emit("verdict", **payload)
        results[candidate][slot] = _Verdict(match, winner, nlex)

    # -- 3. select ---------------------------------------------------------------------------------

    async def _select(self, codes: dict[int, str], verdicts: dict[int, list[_Verdict]]) -> int:
        self.stage("select", "started")
        scores = {c: sum(v.match for v in vs) for c, vs in verdicts.items()}
        source = "real execution" if self.settings.oracle else "simulation"
        top = max(scores.values())
        tied = [c for c, score in scores.items() if score == top]
        known = {c for c in tied if any(v.known for v in verdicts[c])}  # as the verdicts were judged
        agreement, likelihoods, unscored = None, None, None
        if self.settings.ties == "agreement" and len(tied) > 1:
            counts = dict(zip(codes, agreement_counts(list(codes.values()), self.problem.kind), strict=True))
            agreement = {c: counts[c] for c in tied}
        scored = [c for c in tied if c not in known]  # the likelihood of a known failure is not asked
        if self.settings.ties == "likelihood" and not self.settings.oracle and len(scored) > 1:
            try:
                likelihoods = await self._likelihoods({c: codes[c] for c in scored})
            except (MalformedReply, PromptTooLong, LLMRejected) as exc:  # a server that cannot score
                # (no prompt_logprobs): the run goes on, its ties broken at random
                unscored = f"the likelihoods could not be had ({exc}); ties broken at random"
        selection = best_of(
            scores,
            self.rng,
            tests=len(self.public),
            source=source,
            known=known,
            agreement=agreement,
            likelihoods=likelihoods,
        )
        extra: dict[str, Any] = {}
        if agreement is not None:
            extra["agreement"] = [agreement.get(c) for c in range(self.settings.k)]
        if likelihoods is not None:
            extra["likelihoods"] = [likelihoods.get(c) for c in range(self.settings.k)]
        self.emit(
            "selected",
            candidate=selection.candidate,
            scores=[scores.get(c) for c in range(self.settings.k)],
            tied=list(selection.tied),
            broken_by=list(selection.broken_by),
            seed=self.seed,
            reason=selection.reason if unscored is None else f"{selection.reason} ({unscored})",
            **extra,
        )
        self.stage("select", "finished")
        return selection.candidate

    async def _likelihoods(self, codes: dict[int, str]) -> dict[int, float]:
        """Per program (none known to fail), the log-probability the model gives the expected outputs
        of the public tests as the answers of their simulate requests, summed over the tests."""

        async def one(code: str, test: TestCase) -> float:
            program = program_for(self.problem, code, test)
            messages, _, call = _simulate_request(code, self.problem.kind, test.input, program.call)
            prefilled = [*messages, {"role": "assistant", "content": simulate.answer_prefill(call)}]
            async with self.limit:
                self.requests += 1
                return await self.client.score(prefilled, simulate.answer_ending(test.output, call))

        pairs = [(c, test) for c in codes for _, test in self.public]
        logprobs = await asyncio.gather(*(one(codes[c], test) for c, test in pairs))
        totals = dict.fromkeys(codes, 0.0)
        for (c, _), logprob in zip(pairs, logprobs, strict=True):
            totals[c] += logprob
        return totals

    # -- 4. repair ---------------------------------------------------------------------------------

    async def _repair(
        self, chosen: int, code: str, verdicts: list[_Verdict]
    ) -> tuple[str, list[_Verdict], int, bool]:
        """Self-RLEF; returns the final program, its verdicts, the repair prompts asked and whether it
        was submitted. ``settings.repair`` says who decides each turn (``RunSettings``): in ``model``
        mode the model's free reply (``#SUBMIT``, a fix or neither); in ``guided`` mode the verdicts
        decide whether to ask at all, the reply is a program (``_ask_fix``) and a fix is kept only
        when its verdicts match more public tests than the attempt's (else ``repair_rejected``); a
        guided turn that kept no fix is asked again at the next turn when sampling (temperature > 0)."""
        if self.settings.turns == 0:
            return code, verdicts, 0, False
        started = time.monotonic()
        self.stage("repair", "started")
        guided = self.settings.repair == "guided"
        # a guided turn without a fix kept leaves the attempt as it was; sampled, the next turn asks
        # again (new replies); greedy, it would get the same replies, so the repair stops
        retry = guided and self.settings.temperature > 0
        judged_by = "real execution" if self.settings.oracle else "simulation"
        asked, submitted = 0, False
        for turn in range(1, self.settings.turns + 1):
            feedback = [
                repair.Feedback(repair.feedback_input(self.problem, test.input), test.output, verdict.output)
                for (_, test), verdict in zip(self.public, verdicts, strict=True)
            ]
            shown = [asdict(f) for f in feedback]
            if guided and all(v.match for v in verdicts):  # the feedback already says it is right
                self.emit("repair_turn", turn=turn, submitted=True, code=None, text="", feedback=shown,
                          parse_error=None, decided_by=judged_by)  # fmt: skip
                submitted = True
                break
            replies: dict[str, Any] = {}
            judged: _Judged | None = None
            if guided:
                wrong = [f for f, verdict in zip(feedback, verdicts, strict=True) if not verdict.match]
                text, parsed, replies, judged = await self._ask_fix(turn, code, wrong, chosen)
            else:
                text, parsed = await self._ask_repair(turn, code, feedback)
            asked += 1
            self.emit("repair_turn", turn=turn, submitted=parsed.submitted, code=parsed.code, text=text,
                      feedback=shown, parse_error=parsed.error, decided_by="model", **replies)  # fmt: skip
            if parsed.submitted or parsed.code is None:
                submitted = parsed.submitted
                if retry:
                    continue
                break
            if judged is not None:  # judged already, its events held back until now
                for type, payload in judged.events:
                    self.emit(type, **payload)
                fixed = judged.verdicts
            else:
                fixed = (await self._judge_all({chosen: parsed.code}, turn=turn))[chosen]
            matched, before = sum(v.match for v in fixed), sum(v.match for v in verdicts)
            if guided and matched <= before:
                self.emit("repair_rejected", turn=turn, matched=matched, attempt_matched=before,
                          public_tests=len(self.public), judged_by=judged_by,
                          reason=_not_kept(judged_by, matched, before, len(self.public)))  # fmt: skip
                if retry:
                    continue
                break
            code, verdicts = parsed.code, fixed
            self.code_turn = turn
        self.stage("repair", "finished", seconds=_since(started), turns=asked)
        return code, verdicts, asked, submitted

    async def _ask_repair(
        self, turn: int, code: str, feedback: list[repair.Feedback]
    ) -> tuple[str, RepairParse]:
        """Model mode: the paper's feedback prompt, its free reply read by ``parse_repair``."""

        def on_delta(index: int, text: str) -> None:
            self.emit("repair_delta", turn=turn, text=text)

        try:
            result = await self.chat(repair.messages(self.problem, code, feedback), n=1, on_delta=on_delta)
        except PromptTooLong as exc:
            return "", RepairParse(submitted=False, error=f"prompt too long: {exc}")
        choice = result.choices[0]
        parsed = parse_repair(choice.text, code, self.problem.kind)
        error = _noting_cut(parsed.error, choice.finish_reason, self._room(result))
        return choice.text, replace(parsed, error=error)

    async def _ask_fix(
        self, turn: int, code: str, wrong: list[repair.Feedback], candidate: int
    ) -> tuple[str, RepairParse, dict[str, Any], _Judged | None]:
        """Guided mode: the solve request told which public tests the attempt got ``wrong``, without
        the attempt's code (``repair.fix_messages``), prefilled with the opening fence and stopped at
        the closing one (``solve.PREFILL``, ``solve.STOP``), so each reply is a program, read as a
        solve reply is (``solve.parse``). ``settings.fixes`` replies are sampled (one at temperature
        0). A reply is usable when it is a new program (``source.same_program``: test code added
        after the function does not make one; the same program again is ``REPEATED``) not known to
        fail (``static.cannot_pass``). Several usable replies are judged at once as ``candidate`` at
        ``turn`` (``_judge_held``) and the one matching the most public tests is the fix (the first
        of those tied); one is the fix unjudged; with none, the first new program, else no fix.
        Returns the fix's text and parse, ``repair_turn``'s ``fix`` (its reply's index, None without
        one) and ``replies`` (every reply: ``fix``, ``text``, ``code``, ``error``, ``matched``: public
        tests its verdicts matched, None when not judged; ``why``: why it was or was not the fix),
        and the fix's judgement when it was made here. The first reply streams, its prefill once at
        its start (a well-formed block)."""
        begun = False

        def on_delta(index: int, text: str) -> None:
            nonlocal begun
            if index != 0:
                return
            if not begun:
                begun, text = True, solve.PREFILL + text
            self.emit("repair_delta", turn=turn, text=text)

        try:
            messages = repair.fix_messages(self.problem, wrong)
            result = await self.chat(
                messages,
                n=self.settings.fix_replies,
                stop=solve.STOP,
                on_delta=on_delta,
                repetition=solve.LOOP_STOP,
            )
        except PromptTooLong as exc:
            return "", RepairParse(submitted=False, error=f"prompt too long: {exc}"), {}, None
        if not begun:  # an empty reply: the prefill alone, so that the deltas still add up to the text
            on_delta(0, "")
        read = [self._read_fix(choice, code, self._room(result)) for choice in result.choices]
        new = [r for r in read if r.parsed.code is not None]
        usable = [r for r in new if r.known is None]
        judged = await self._judge_held(usable, candidate, turn) if len(usable) > 1 else {}
        if judged:
            chosen = max((r for r in usable if r.index in judged), key=lambda r: judged[r.index].matched)
        else:
            chosen = (usable or new or read)[0]
        public = len(self.public)
        replies = [
            {"fix": r.index, "text": r.text, "code": r.parsed.code,
             "error": r.parsed.error or (f"known to fail: {r.known}" if r.known else None),
             "matched": judged[r.index].matched if r.index in judged else None,
             "why": _why(r, judged.get(r.index), judged.get(chosen.index), r is chosen, public)}
            for r in read
        ]  # fmt: skip
        parsed = chosen.parsed
        if parsed.code is None and len(read) > 1:
            parsed = RepairParse(submitted=False, error=f"none of the {len(read)} replies is a new program")
        fix = chosen.index if parsed.code is not None else None
        return chosen.text, parsed, {"fix": fix, "replies": replies}, judged.get(chosen.index)

    async def _judge_held(self, fixes: list[_Fix], candidate: int, turn: int) -> dict[int, _Judged]:
        """Every one of ``fixes`` judged at once on the public tests as ``candidate`` at ``turn``, each
        with its events held back (only the fix taken sends them)."""

        async def one(fix: _Fix) -> _Judged:
            held: list[tuple[str, dict[str, Any]]] = []
            verdicts = await self._judge_all(
                {candidate: fix.parsed.code or ""},
                turn=turn,
                emit=lambda type, **payload: held.append((type, payload)),
            )
            return _Judged(verdicts[candidate], held)

        async with asyncio.TaskGroup() as group:
            tasks = {fix.index: group.create_task(one(fix)) for fix in fixes}
        return {index: task.result() for index, task in tasks.items()}

    def _room(self, result: ChatResult) -> int | None:
        """The reply budget a request's prompt left in the model's context, when less than the settings'
        (a long statement), for ``_noting_cut``."""
        return result.max_tokens if 0 < result.max_tokens < self.settings.max_tokens else None

    def _read_fix(self, choice: Choice, attempt: str, room: int | None) -> _Fix:
        """One reply to the guided request: a new program, the attempt again (``REPEATED``) or none."""
        text, parsed = solve.PREFILL + choice.text, solve.parse(choice.text)
        if parsed.code is not None and same_program(parsed.code, attempt, self.problem.kind):
            return _Fix(choice.index, text, RepairParse(submitted=False, error=REPEATED), None)
        error = _noting_cut(parsed.error, choice.finish_reason, room)
        known = cannot_pass(self.problem, parsed.code) if parsed.code is not None else None
        return _Fix(choice.index, text, RepairParse(submitted=False, code=parsed.code, error=error), known)

    # -- 5. execute the final program for real --------------------------------------------------------

    async def _execute_final(self, chosen: int, code: str, verdicts: list[_Verdict]) -> dict[str, Any]:
        started = time.monotonic()
        self.stage("execute", "started", final=True)
        nlex_by_test = {index: v.nlex for (index, _), v in zip(self.public, verdicts, strict=True)}
        passed = {"public": 0, "private": 0}

        async def one(index: int, test: TestCase) -> RealRun:
            async with self.limit:
                return await self.real(
                    program_for(self.problem, code, test), test.output, nlex_by_test.get(index)
                )

        ordered = in_page_order(self.problem.tests)
        async with asyncio.TaskGroup() as group:
            runs = [group.create_task(one(index, test)) for index, test in ordered]
        label = {"candidate": chosen, "turn": self.code_turn, "final": True}
        for (index, test), task in zip(ordered, runs, strict=True):  # in the page's order
            real = task.result()
            passed["public" if test.public else "private"] += real.passed
            self.emit("execution", **label, test=index, public=test.public, **real.to_dict())
        self.stage("execute", "finished", final=True, seconds=_since(started))
        public = len(self.public)
        return {
            "passed_public": passed["public"],
            "public_tests": public,
            "passed_private": passed["private"],
            "private_tests": len(self.problem.tests) - public,
        }


def _winning_text(
    kind: Any, winner: str | None, predictions: list[str | None], texts: list[str]
) -> str | None:
    if winner is None:
        return texts[0] if texts else None
    key = vote_key(kind, winner)
    return next(
        (t for t, p in zip(texts, predictions, strict=True) if p is not None and vote_key(kind, p) == key),
        None,
    )


def _why(fix: _Fix, judged: _Judged | None, fix_judged: _Judged | None, taken: bool, public: int) -> str:
    """One sentence on a guided repair reply: what it is, and why it was or was not the fix
    (``fix_judged``: the judgement of the reply taken)."""
    if fix.parsed.code is None:
        return fix.parsed.error or "no program"
    if fix.known is not None:
        return f"known to fail: {fix.known}" + (" (as is every new program)" if taken else "")
    if judged is None:
        return "the only new program not known to fail"
    matched = f"its verdicts matched {judged.matched} of {public} public tests"
    if taken:
        return f"{matched}, the most of the replies"
    if fix_judged is not None and fix_judged.matched == judged.matched:
        return f"{matched}, as many as the reply taken, which came first"
    return matched


def _noting_cut(error: str | None, finish_reason: str | None, shortened: int | None = None) -> str | None:
    """A reply's parse error, saying so when the reply was cut by its token budget (``shortened``:
    the budget the prompt left in the model's context, when it was less than asked) or stopped
    looping (``solve.LOOP_STOP``)."""
    budget = (
        f"the reply hit the token budget: the prompt left room for only {shortened} tokens in the "
        "model's context window; a shorter statement leaves more"
        if shortened is not None
        else "the reply hit the token budget"
    )
    why = {"length": budget, "repetition": "the reply repeated itself and was stopped"}
    return f"{error} ({why[finish_reason]})" if error and finish_reason in why else error


def _not_kept(judged_by: str, matched: int, before: int, public: int) -> str:
    """``repair_rejected``'s sentence: why a guided fix was not kept."""
    how = "its real execution passed" if judged_by == "real execution" else "its simulation matched"
    return f"not kept: {how} {matched} of {public} public tests, the attempt's {before}"


def _root(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups from TaskGroups."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _simulate_request(
    code: str, kind: str, input: str, call: str | None
) -> tuple[list[dict[str, str]], tuple[str, ...], str | None]:
    """The simulate request for one program on one input: messages, stop strings, and the call
    (None for a stdin program)."""
    if kind == "call":
        assert call is not None
        return simulate.call_messages(code, call), simulate.CALL_STOP, call
    return simulate.stdin_messages(code, input), simulate.STDIN_STOP, None


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)


def _unset_emit(type: str, **payload: Any) -> None:
    raise RuntimeError("emit used before the run started")
