"""Repair (Self-RLEF): the chosen program, judged on the public tests by its own simulations, is
repaired from that feedback for up to ``RunSettings.turns`` turns.

Each turn, in order:

1. a program whose verdicts match every public test is submitted as it is, without asking;
2. otherwise the model is asked for a different program (``prompts.repair.fix_messages``: the solve
   request told which public tests the attempt got wrong, without the attempt's code), ``FIX_REPLIES``
   replies in one request (one at temperature 0, where they would all be the same);
3. a reply is usable when it is a new program (``source.same_program``) not known to fail
   (``static.cannot_pass``); several usable replies are judged at once and the one matching the most
   public tests is the fix (the first of those tied); one is the fix unjudged;
4. the fix replaces the attempt only when its verdicts match more public tests than the attempt's
   (else ``repair_rejected``); when sampling, a turn that kept none asks again at the next turn.

Judged by simulation, this is ExecSim's way of asking for Self-RLEF's fix: the default model rarely
parses the paper's free-form reply and copies an attempt it is shown (docs/results.md#repair).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass
from typing import Any

from simulator.llm.client import Choice
from simulator.llm.errors import PromptTooLong
from simulator.pipeline.job import Job, noting_cut, since
from simulator.pipeline.static import cannot_pass
from simulator.pipeline.verdicts import Judging, Verdict, matched
from simulator.prompts import repair, solve
from simulator.prompts.parsing import REPEATED, CodeParse
from simulator.source import same_program

FIX_REPLIES = 4  # replies a repair turn samples; several often hold a passing program that is not the first


@dataclass(frozen=True)
class Repaired:
    """Where repair left the run: the final program, the turn that wrote it (0: the candidate itself),
    its verdicts, the repair requests asked and whether the program was submitted as it is."""

    code: str
    turn: int
    verdicts: list[Verdict]
    asked: int
    submitted: bool


@dataclass(frozen=True)
class _Judged:
    """A fix judged on the public tests, with the events that judging would have sent."""

    verdicts: list[Verdict]
    events: list[tuple[str, dict[str, Any]]]

    @property
    def matched(self) -> int:
        return matched(self.verdicts)


@dataclass(frozen=True)
class _Fix:
    """One reply to the repair request, read: ``known`` says why its new program cannot pass."""

    index: int
    text: str
    parsed: CodeParse
    known: str | None


async def repair_program(
    job: Job, judging: Judging, chosen: int, code: str, verdicts: list[Verdict]
) -> Repaired:
    """Up to ``turns`` repair turns of candidate ``chosen`` (its ``code`` and ``verdicts``)."""
    if job.settings.turns == 0:
        return Repaired(code, 0, verdicts, 0, False)
    return await _Repair(job, judging, chosen).turns(code, verdicts)


class _Repair:
    def __init__(self, job: Job, judging: Judging, chosen: int) -> None:
        self.job, self.judging, self.chosen = job, judging, chosen
        self.problem = judging.problem
        self.public = judging.public

    async def turns(self, code: str, verdicts: list[Verdict]) -> Repaired:
        job, settings = self.job, self.job.settings
        started = time.monotonic()
        job.stage("repair", "started")
        # a turn without a fix kept leaves the attempt as it was; sampled, the next turn asks again
        # (new replies); greedy, it would get the same replies, so the repair stops
        retry = settings.temperature > 0
        asked, submitted, code_turn = 0, False, 0
        for turn in range(1, settings.turns + 1):
            feedback = [
                repair.Feedback(repair.feedback_input(self.problem, test.input), test.output, verdict.output)
                for (_, test), verdict in zip(self.public, verdicts, strict=True)
            ]
            shown = [asdict(f) for f in feedback]
            if all(v.match for v in verdicts):  # the feedback already says it is right
                job.emit("repair_turn", turn=turn, submitted=True, code=None, text="", feedback=shown,
                         parse_error=None, decided_by=self.judging.by)  # fmt: skip
                submitted = True
                break
            wrong = [f for f, verdict in zip(feedback, verdicts, strict=True) if not verdict.match]
            text, parsed, replies, judged = await self._ask_fix(turn, code, wrong)
            asked += 1
            job.emit("repair_turn", turn=turn, submitted=False, code=parsed.code, text=text,
                     feedback=shown, parse_error=parsed.error, decided_by="model", **replies)  # fmt: skip
            if parsed.code is None:
                if retry:
                    continue
                break
            if judged is not None:  # judged already, its events held back until now
                for type, payload in judged.events:
                    job.emit(type, **payload)
                fixed = judged.verdicts
            else:
                fixed = (await self.judging.all({self.chosen: parsed.code}, turn=turn))[self.chosen]
            now, before = matched(fixed), matched(verdicts)
            if now <= before:
                job.emit("repair_rejected", turn=turn, matched=now, attempt_matched=before,
                         public_tests=len(self.public), judged_by=self.judging.by,
                         reason=_not_kept(self.judging.by, now, before, len(self.public)))  # fmt: skip
                if retry:
                    continue
                break
            code, verdicts, code_turn = parsed.code, fixed, turn
        job.stage("repair", "finished", seconds=since(started), turns=asked)
        return Repaired(code, code_turn, verdicts, asked, submitted)

    async def _ask_fix(
        self, turn: int, code: str, wrong: list[repair.Feedback]
    ) -> tuple[str, CodeParse, dict[str, Any], _Judged | None]:
        """The repair request, prefilled with the opening fence and stopped at the closing one
        (``solve.PREFILL``, ``solve.STOP``), so each reply is a program, read as a solve reply is.
        Returns the fix's text and parse, ``repair_turn``'s ``fix`` (its reply's index, None without
        one) and ``replies`` (every reply: ``fix``, ``text``, ``code``, ``error``, ``matched``: public
        tests its verdicts matched, None when not judged; ``why``: why it was or was not the fix),
        and the fix's judgement when it was made here. The first reply streams, its prefill once at
        its start (a well-formed block)."""
        job = self.job
        begun = False

        def on_delta(index: int, text: str) -> None:
            nonlocal begun
            if index != 0:
                return
            if not begun:
                begun, text = True, solve.PREFILL + text
            job.emit("repair_delta", turn=turn, text=text)

        try:
            result = await job.chat(
                repair.fix_messages(self.problem, wrong),
                n=FIX_REPLIES if job.settings.temperature > 0 else 1,
                stop=solve.STOP,
                on_delta=on_delta,
                repetition=solve.LOOP_STOP,
            )
        except PromptTooLong as exc:
            return "", CodeParse(None, f"prompt too long: {exc}"), {}, None
        if not begun:  # an empty reply: the prefill alone, so that the deltas still add up to the text
            on_delta(0, "")
        read = [self._read(choice, code, job.room(result)) for choice in result.choices]
        new = [r for r in read if r.parsed.code is not None]
        usable = [r for r in new if r.known is None]
        judged = await self._judge_held(usable, turn) if len(usable) > 1 else {}
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
            parsed = CodeParse(None, f"none of the {len(read)} replies is a new program")
        fix = chosen.index if parsed.code is not None else None
        return chosen.text, parsed, {"fix": fix, "replies": replies}, judged.get(chosen.index)

    async def _judge_held(self, fixes: list[_Fix], turn: int) -> dict[int, _Judged]:
        """Every one of ``fixes`` judged at once on the public tests as the chosen candidate at
        ``turn``, each with its events held back (only the fix taken sends them)."""

        async def one(fix: _Fix) -> _Judged:
            held: list[tuple[str, dict[str, Any]]] = []
            verdicts = await self.judging.all(
                {self.chosen: fix.parsed.code or ""},
                turn=turn,
                emit=lambda type, **payload: held.append((type, payload)),
            )
            return _Judged(verdicts[self.chosen], held)

        async with asyncio.TaskGroup() as group:
            tasks = {fix.index: group.create_task(one(fix)) for fix in fixes}
        return {index: task.result() for index, task in tasks.items()}

    def _read(self, choice: Choice, attempt: str, room: int | None) -> _Fix:
        """One reply: a new program, the attempt again (``REPEATED``) or none."""
        text, parsed = solve.PREFILL + choice.text, solve.parse(choice.text)
        if parsed.code is not None and same_program(parsed.code, attempt, self.problem.kind):
            return _Fix(choice.index, text, CodeParse(None, REPEATED), None)
        error = noting_cut(parsed.error, choice.finish_reason, room)
        known = cannot_pass(self.problem, parsed.code) if parsed.code is not None else None
        return _Fix(choice.index, text, CodeParse(parsed.code, error), known)


def _why(fix: _Fix, judged: _Judged | None, fix_judged: _Judged | None, taken: bool, public: int) -> str:
    """One sentence on a repair reply: what it is, and why it was or was not the fix (``fix_judged``:
    the judgement of the reply taken)."""
    if fix.parsed.code is None:
        return fix.parsed.error or "no program"
    if fix.known is not None:
        return f"known to fail: {fix.known}" + (" (as is every new program)" if taken else "")
    if judged is None:
        return "the only new program not known to fail"
    said = f"its verdicts matched {judged.matched} of {public} public tests"
    if taken:
        return f"{said}, the most of the replies"
    if fix_judged is not None and fix_judged.matched == judged.matched:
        return f"{said}, as many as the reply taken, which came first"
    return said


def _not_kept(judged_by: str, now: int, before: int, public: int) -> str:
    """``repair_rejected``'s sentence: why a fix was not kept."""
    how = "its real execution passed" if judged_by == "real execution" else "its simulation matched"
    return f"not kept: {how} {now} of {public} public tests, the attempt's {before}"
