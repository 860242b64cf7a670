"""One verdict on a simulation: the model's NLEX text checked against the program's real execution.

Everything that says "verified", "divergent" or "first wrong at" calls ``verify`` (or
``verify_program``, which runs the program in the sandbox with the tracer first): the run pipeline,
"Run for real", "Simulate my code", the explorer's marks, the annotation queue and review, the
exports, ``execsim check`` / ``simulate`` and the evaluation reports. The record it returns:

- ``claims``: every claim of the text (``simulator.nlex.claims``) with its verdict against the trace
  (``simulator.nlex.check``) and its character offsets;
- ``answer``: the final answer's verdict, ``true`` / ``false`` (against the returned value, the
  exception raised, or the whole stdout), ``missing`` (the text states no usable result: no answer
  block, no "the result is X", or ``== ??``) or ``unverifiable`` (the run was cut short, or the stated
  value cannot be compared), with the claimed and actual values. Without an answer block, the last
  prose statement of the result ("the result is 6") stands for the answer;
- ``first_divergence``: the first false claim in reading order, with a sentence a person can read;
- ``verified``: the answer was checked true and no claim is false. A text with nothing checkable
  about the result is *unverified*, never verified; so is a text whose claims were not all read
  (``unread_from``: the offset from which none was, past ``claims.MAX_TEXT_CHARS`` characters or where
  a text built to be slow to read spent the work it may spend; ``message`` says so).

``Verification.to_dict()`` is the JSON contract of ``execsim check --json`` and of the ``verification``
field of events (docs/events.md); ``Verification.from_dict`` reads it back. ``unread_from`` is in it
only when the text was not all read.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from simulator.execution.program import Program
from simulator.execution.trace import Trace
from simulator.nlex.check import ClaimVerdict, check_claims
from simulator.nlex.claims import Claim, extract, program_names
from simulator.prompts.parsing import unusable_call_answer

SCHEMA_VERSION = 1
AnswerVerdict = Literal["true", "false", "missing", "unverifiable"]
Status = Literal["checked", "no_trace", "error"]
Label = Literal["agrees", "diverges", "unverified"]
CUT_SHORT = ("timeout", "memory_limit", "output_limit", "killed")


@dataclass(frozen=True)
class ClaimCheck:
    """One claim of the text, where it is (``text[start:end]``) and what the real run says of it."""

    kind: str
    text: str
    start: int
    end: int
    verdict: str  # "true" | "false" | "unverifiable"
    step: int | None = None  # the trace step it was held against
    actual: str | None = None  # what the trace shows there
    claimed: str | None = None  # the value the text states
    line: int | None = None  # the program line of that step (or the line the claim names)
    reason: str = ""
    name: str | None = None  # value claims: the variable (or ``dp[1]``)


@dataclass(frozen=True)
class AnswerCheck:
    verdict: AnswerVerdict
    claimed: str | None = None
    actual: str | None = None
    start: int | None = None
    end: int | None = None
    step: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class FirstDivergence:
    """Where the simulation first went wrong, as offsets into the text and a readable sentence."""

    start: int
    end: int
    kind: str
    text: str
    step: int | None
    claimed: str | None
    actual: str | None
    sentence: str
    line: int | None = None


@dataclass(frozen=True)
class Verification:
    status: Status
    answer: AnswerCheck
    claims: tuple[ClaimCheck, ...] = ()
    first_divergence: FirstDivergence | None = None
    message: str = ""  # why nothing was checked (status other than "checked"), or not all of the text
    unread_from: int | None = None  # no claim was read from this offset on (None: the whole text was)
    schema_version: int = field(default=SCHEMA_VERSION)

    @property
    def verified(self) -> bool:
        if self.unread_from is not None:  # a false claim may be in what was not read
            return False
        return self.answer.verdict == "true" and not any(c.verdict == "false" for c in self.claims)

    @property
    def divergent(self) -> bool:
        return self.first_divergence is not None

    @property
    def label(self) -> Label:
        """What a page says: the text agrees with the run, diverges from it, or could not be checked."""
        if self.divergent:
            return "diverges"
        return "agrees" if self.verified else "unverified"

    def count(self, verdict: str) -> int:
        return sum(1 for c in self.claims if c.verdict == verdict)

    @property
    def counts(self) -> dict[str, int]:
        """Claims per verdict (templates read ``counts.false`` from this object and its dict alike)."""
        return {v: self.count(v) for v in ("true", "false", "unverifiable")}

    @property
    def accuracy(self) -> float | None:
        """True claims over checked (true or false) claims; None when nothing was checked."""
        checked = self.count("true") + self.count("false")
        return self.count("true") / checked if checked else None

    @property
    def summary(self) -> str:
        """One line: "agrees (5 claims checked)", "first wrong: <sentence>", "unverified: <why>"."""
        if self.first_divergence is not None:
            return f"first wrong: {self.first_divergence.sentence}"
        if self.verified:
            return f"agrees ({self.count('true')} claims checked, the answer among them)"
        return f"unverified: {self.message or self.answer.reason or 'nothing about the result was checked'}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["claims"] = list(data["claims"])
        unread = {} if self.unread_from is None else {"unread_from": self.unread_from}  # only when so
        return {
            "schema_version": self.schema_version,
            "status": self.status,
            "verified": self.verified,
            "accuracy": self.accuracy,
            "label": self.label,
            "summary": self.summary,
            "answer": data["answer"],
            "claims": data["claims"],
            "first_divergence": data["first_divergence"],
            "message": self.message,
            **unread,
            "counts": self.counts,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verification:
        first = data.get("first_divergence")
        return cls(
            status=data.get("status", "checked"),
            answer=AnswerCheck(**data.get("answer") or {"verdict": "missing"}),
            claims=tuple(ClaimCheck(**c) for c in data.get("claims") or ()),
            first_divergence=FirstDivergence(**first) if first else None,
            message=data.get("message", ""),
            unread_from=data.get("unread_from"),
            schema_version=data.get("schema_version", SCHEMA_VERSION),
        )


def unchecked(status: Status, message: str) -> Verification:
    """A verification that could not look at the run (no trace, the sandbox failed)."""
    return Verification(status=status, answer=AnswerCheck("unverifiable", reason=message), message=message)


def verify(
    text: str, trace: Trace | None, program: Program, *, status: str | None = None, raised: str | None = None
) -> Verification:
    """Check ``text`` (the model's simulation of ``program``) against the real ``trace``; ``status``
    is the real run's (a run cut short leaves its answer unverifiable) and ``raised`` the type of the
    exception it ended with (a program that fails before its first traced step has an empty trace)."""
    failed_early = trace is not None and not trace.steps and status == "runtime_error" and bool(raised)
    if trace is None or (not trace.steps and not failed_early):
        why = f"the real run recorded no trace ({status})" if status else "no trace was recorded"
        return unchecked("no_trace", why)
    extraction = extract(text, program_names(program.code))
    claims = extraction.claims
    answer_claim = _answer_claim(claims)
    verdicts = check_claims(claims, trace).verdicts
    if status in CUT_SHORT:
        verdicts = [_cut_short(v, status) if v.claim is answer_claim else v for v in verdicts]
    elif failed_early:
        verdicts = [_raised(v, str(raised)) if v.claim is answer_claim else v for v in verdicts]
    checks = tuple(_claim_check(v, trace) for v in verdicts)
    answer = _answer(answer_claim, verdicts, program)
    if answer.verdict == "missing" and answer_claim is not None:  # "== ??": not a claim at all
        checks = tuple(c for c, v in zip(checks, verdicts, strict=True) if v.claim is not answer_claim)
    first = next((c for c in checks if c.verdict == "false"), None)
    unread = extraction.unread_from
    return Verification(
        status="checked",
        answer=answer,
        claims=checks,
        first_divergence=None if first is None else _divergence(first, program),
        message="" if unread is None else f"the text after character {unread:,} was not checked",
        unread_from=unread,
    )


def verify_program(text: str, program: Program, *, max_steps: int | None = None) -> tuple[Verification, Any]:
    """Run ``program`` in the sandbox with the tracer, then ``verify``; returns the verification and
    the ``ExecutionResult``. A sandbox that cannot start is a verification with status ``error``."""
    from simulator.execution import SandboxError
    from simulator.execution import run as run_program

    try:
        kwargs = {"max_steps": max_steps} if max_steps else {}
        result = run_program(program, trace=True, **kwargs)
    except SandboxError as exc:
        return unchecked("error", f"the sandbox is not available: {exc}"), None
    return verify_result(text, result, program), result


def verify_result(text: str, result: Any, program: Program) -> Verification:
    """``verify`` against an ``ExecutionResult`` of ``program`` (its trace, status and exception)."""
    raised = result.exception.type if result.exception is not None else None
    return verify(text, result.trace, program, status=result.status, raised=raised)


# -- pieces ------------------------------------------------------------------------------------------


def _answer_claim(claims: list[Claim]) -> Claim | None:
    """The claim that states the result: the answer block, else the last prose statement of it
    ("the result is 6"), else a text's closing "... returns 6" (made a result claim, in place)."""
    answer = next((c for c in claims if c.kind == "answer"), None)
    if answer is not None:
        return answer
    result = next((c for c in reversed(claims) if c.kind == "result"), None)
    if result is None and claims and claims[-1].kind == "return":
        claims[-1] = result = replace(claims[-1], kind="result")
    return result


def _cut_short(verdict: ClaimVerdict, status: str) -> ClaimVerdict:
    if verdict.verdict == "true":
        return verdict
    return ClaimVerdict(verdict.claim, "unverifiable", verdict.step, verdict.actual,
                        reason=f"the real run was cut short ({status})")  # fmt: skip


def _raised(verdict: ClaimVerdict, raised: str) -> ClaimVerdict:
    """The answer against a program that raised before its first traced step."""
    said = (verdict.claim.value or "").split()
    ok = len(said) >= 2 and said[-2] == "raises" and said[-1] == raised
    return ClaimVerdict(verdict.claim, "true" if ok else "false", actual=f"raises {raised}")


def _answer(claim: Claim | None, verdicts: list[ClaimVerdict], program: Program) -> AnswerCheck:
    if claim is None:
        return AnswerCheck("missing", reason="the text states no result")
    verdict = next(v for v in verdicts if v.claim is claim)
    claimed = (claim.value or "").strip()
    where = {"start": claim.start, "end": claim.end, "step": verdict.step}
    if program.call is not None and claim.kind == "answer":
        problem = unusable_call_answer(claimed, program.call)
        if problem and "raises" not in claimed:
            return AnswerCheck("missing", claimed or None, verdict.actual, reason=problem, **where)
    return AnswerCheck(verdict.verdict, claimed, verdict.actual, reason=verdict.reason, **where)


def _claim_check(verdict: ClaimVerdict, trace: Trace) -> ClaimCheck:
    claim = verdict.claim
    line = claim.line
    if verdict.step is not None and 0 <= verdict.step < len(trace.steps) and claim.kind != "line":
        line = trace.steps[verdict.step].line
        if claim.kind == "value":  # a value is seen the step after the line that set it ran
            line = _line_just_run(trace, verdict.step)
    return ClaimCheck(
        kind=claim.kind,
        text=claim.text,
        start=claim.start,
        end=claim.end,
        verdict=verdict.verdict,
        step=verdict.step,
        actual=verdict.actual,
        claimed=claim.value,
        line=line,
        reason=verdict.reason,
        name=claim.name,
    )


def _line_just_run(trace: Trace, step: int) -> int:
    """The line run last in step ``step``'s frame before it (as the explorer marks it at that step):
    where a value seen at ``step`` was set. A frame's first step has none, so its own line."""
    steps = trace.steps
    frame = steps[step].frame
    earlier = (steps[i] for i in range(step - 1, -1, -1) if steps[i].frame == frame)  # no copy of the steps
    return next((s.line for s in earlier), steps[step].line)


def _divergence(check: ClaimCheck, program: Program) -> FirstDivergence:
    return FirstDivergence(
        start=check.start,
        end=check.end,
        kind=check.kind,
        text=check.text,
        step=check.step,
        claimed=check.claimed,
        actual=check.actual,
        sentence=sentence(check, program),
        line=check.line,
    )


def shorten(value: str | None, limit: int = 60) -> str:
    """``value`` on one line, cut to ``limit`` characters with an ellipsis: how sentences quote values."""
    text = " ".join((value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def sentence(check: ClaimCheck, program: Program) -> str:
    """A false claim in words: "line 2: the simulation says it returns 1; the real run returns 6
    (step 5)". The step is counted from 1, as a person reads it in the explorer (the claim's ``step``
    is the trace's index, from 0: step 5 is index 4)."""
    said, real = shorten(check.claimed), shorten(check.actual)
    where = f"line {check.line}: " if check.line and check.kind not in ("line", "repeat") else ""
    step = f" (step {check.step + 1})" if check.step is not None else ""
    script = program.call is None
    if check.kind == "value":
        name = check.name or "the variable"
        return (
            f"{where}the simulation says {name} is {said}; the real run has {real or 'another value'}{step}"
        )
    if check.kind == "return":
        real = real or "nothing here"
        return f"{where}the simulation says it returns {said}; the real run returns {real}{step}"
    if check.kind == "print":
        return (
            f"{where}the simulation says it prints {said}; the real run prints {real or 'nothing here'}{step}"
        )
    if check.kind == "condition":  # claimed: "holds" or "fails"; actual: "the condition holds" or so
        holds = "holds" if check.claimed == "holds" else "does not hold"
        return f"{where}the simulation says the condition {holds}; in the real run {real}{step}"
    if check.kind == "calls":
        return f"{where}the simulation says {shorten(check.text)}; the real run makes {real}{step}"
    if check.kind == "line":
        return f"the simulation says line {check.line} runs next; the real run does not go there{step}"
    if check.kind == "repeat":
        return (
            f"the simulation says {shorten(check.text)}; {check.reason or 'the loop runs differently'}{step}"
        )
    if script:
        return f"the simulation says the program prints {said!r}; the real run prints {real!r}"
    returned = real if (real or "").startswith("raises") else f"returns {real}"
    return f"the simulation's answer is {said}; the real call {returned}{step}"
