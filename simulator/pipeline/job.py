"""What every pipeline run shares: the model requests at the run's sampling settings, one simulation
of a program on one input, and turning every way a run can end into exactly one final event.

``Job`` is the base of a solve run (``pipeline.run``) and of "Simulate my code" (``pipeline.single``).
A simulation is one greedy request: the model's likeliest run, the same verdict each time. Narrated
(``RunSettings.narrate``), the model writes an NLEX and then its answer; a narration that ends without
one gets that answer asked for (``simulate.forced_answer``): at once when the token budget cut it (it
loops), after it when the model stopped. Not narrated, the answer is asked for at once
(``simulate.answer_prefill``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simulator.llm.client import ChatResult, Choice, ModelClient, ModelInfo
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
from simulator.pipeline.executor import Executor, ExecutorUnavailable
from simulator.pipeline.settings import RunSettings
from simulator.pipeline.stream import Emit
from simulator.prompts import simulate
from simulator.prompts.parsing import parse_call_answer, parse_stdin_answer

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


@dataclass(frozen=True)
class Simulated:
    """One simulation: the reply's text (the NLEX, when narrated) and the output it predicts (None
    when none could be read)."""

    text: str
    predicted: str | None


class Job:
    """What the pipeline's drivers share: the client, the settings, emitting, failure handling."""

    def __init__(self, settings: RunSettings, client: ModelClient, executor: Executor) -> None:
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

    def room(self, result: ChatResult) -> int | None:
        """The reply budget a request's prompt left in the model's context, when less than the settings'
        (a long statement), for ``noting_cut``."""
        return result.max_tokens if 0 < result.max_tokens < self.settings.max_tokens else None

    async def simulate(
        self,
        code: str,
        kind: str,
        input: str,
        call: str | None,
        labels: dict[str, Any],
        narrate: bool,
        emit: Emit | None = None,
    ) -> Simulated:
        """One greedy simulation of a program on one input; emits simulation_delta and simulation_done
        with ``labels`` (to ``emit``, default the run's). ``narrate``: an NLEX, then the answer; else
        the answer at once (``simulate.answer_prefill``)."""
        emit = emit or self.emit
        messages, stop, call = simulate_request(code, kind, input, call)

        def on_delta(sample: int, text: str) -> None:
            emit("simulation_delta", **labels, sample=sample, text=text)

        try:
            if narrate:
                result = await self.chat(messages, n=1, stop=stop, on_delta=on_delta, temperature=0.0)
                text, tokens, cut, forced = await self._finish(
                    messages, result.choices[0], stop, call, on_delta
                )
            else:
                text, tokens, cut, forced = await self._answer(messages, stop, call, on_delta)
        except PromptTooLong as exc:
            emit("simulation_done", **labels, sample=0, text="", predicted=None,
                 parse_error=f"prompt too long: {exc}", tokens=0)  # fmt: skip
            return Simulated("", None)
        parsed = parse_call_answer(text, call) if call is not None else parse_stdin_answer(text)
        error = parsed.error
        if error and forced:
            how = "hit the token budget" if cut else "stopped before its answer"
            asked = "at once" if cut else "after it"
            error += f" (the narration {how}; the answer was then asked for {asked})"
        else:
            error = noting_cut(error, "length" if cut else None)
        emit(
            "simulation_done",
            **labels,
            sample=0,
            text=text,
            predicted=parsed.predicted,
            parse_error=error,
            tokens=tokens,
            cut=cut,
            forced=forced,
            copied=simulate.copied(parsed.predicted, input) if call is None else None,
        )
        return Simulated(text, parsed.predicted)

    async def _answer(
        self,
        messages: list[dict[str, str]],
        stop: Sequence[str],
        call: str | None,
        on_delta: Callable[[int, str], None],
        turn: str = "",
        shown: str = "",
    ) -> tuple[str, int, bool, bool]:
        """The answer at once (``simulate.answer_prefill``), or as ``turn`` asks for it (the assistant
        turn of a forced answer, ``simulate.forced_answer``): (text, tokens, cut, forced=False), the
        text beginning with ``shown`` (by default the prefill), which streams as the start of the reply
        once the reply has begun."""
        if not turn:
            turn = shown = simulate.answer_prefill(call)
        begun = False

        def stream(index: int, text: str) -> None:
            nonlocal begun
            if not begun:
                begun, text = True, shown + text
            on_delta(0, text)

        result = await self.chat(
            [*messages, {"role": "assistant", "content": turn}],
            n=1,
            stop=stop,
            max_tokens=simulate.ANSWER_TOKENS,
            on_delta=stream,
            temperature=0.0,
        )
        choice = result.choices[0]
        return shown + choice.text, choice.deltas, choice.finish_reason == "length", False

    async def _finish(
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
            text, tokens, _, _ = await self._answer(messages, stop, call, on_delta, turn, shown)
        except PromptTooLong:  # no room left in the context: the reply stays without an answer
            return choice.text, choice.deltas, cut, False
        return choice.text + text, choice.deltas + tokens, cut, True

    def totals(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "requests": self.requests,
            "seconds": round(time.monotonic() - self.started, 3),
        }


def simulate_request(
    code: str, kind: str, input: str, call: str | None
) -> tuple[list[dict[str, str]], tuple[str, ...], str | None]:
    """The simulate request for one program on one input: messages, stop strings, and the call
    (None for a stdin program)."""
    if kind == "call":
        assert call is not None
        return simulate.call_messages(code, call), simulate.CALL_STOP, call
    return simulate.stdin_messages(code, input), simulate.STDIN_STOP, None


def noting_cut(error: str | None, finish_reason: str | None, shortened: int | None = None) -> str | None:
    """A reply's parse error, saying so when the reply was cut by its token budget (``shortened``:
    the budget the prompt left in the model's context window, when it was less than asked) or stopped
    looping (``solve.LOOP_STOP``)."""
    budget = (
        f"the reply hit the token budget: the prompt left room for only {shortened} tokens in the "
        "model's context window; a shorter statement leaves more"
        if shortened is not None
        else "the reply hit the token budget"
    )
    why = {"length": budget, "repetition": "the reply repeated itself and was stopped"}
    return f"{error} ({why[finish_reason]})" if error and finish_reason in why else error


def since(started: float) -> float:
    return round(time.monotonic() - started, 3)


def _root(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups from TaskGroups."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _unset_emit(type: str, **payload: Any) -> None:
    raise RuntimeError("emit used before the run started")
