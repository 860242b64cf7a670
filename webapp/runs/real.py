"""Run for real on an existing run: which programs to execute (from the run's rows), and the flag
that says a real execution of the run was asked for and has not ended yet.

The programs are every candidate that has code (turn 0) and the run's final program (the last repaired
one, turn t; or the selected candidate itself when no repair changed it), each with the NLEX that was
judged on each public test (the sample whose prediction won the vote), so that
``simulator.pipeline.execute.execute_run`` can show where the simulation first diverged.

The flag lives in the cache (Redis in production, shared with the Celery workers; in-process memory in
embedded mode, where the task runs in the same process). It expires after ``FLAG_SECONDS`` without an
event, so a worker that died does not block the button for ever.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache

from simulator.pipeline.execute import RealProgram
from webapp.runs.models import Candidate, RepairTurn, Run, Simulation, Verdict

FLAG_SECONDS = 600
_KEY = "execsim:run-real:{}"


def request(run_id: Any) -> bool:
    """Mark a real execution of the run as asked for; False if one is already pending or under way."""
    return bool(cache.add(_KEY.format(run_id), "1", timeout=FLAG_SECONDS))


def touch(run_id: Any) -> None:
    cache.set(_KEY.format(run_id), "1", timeout=FLAG_SECONDS)


def pending(run_id: Any) -> bool:
    return cache.get(_KEY.format(run_id)) is not None


def clear(run_id: Any) -> None:
    cache.delete(_KEY.format(run_id))


def programs_for(run: Run) -> list[RealProgram]:
    """The run's candidates with code, then its final program when a repair produced it."""
    candidates = [c for c in Candidate.objects.filter(run=run).order_by("index") if c.code]
    final_turn, final_code = _final(run)
    programs = [
        RealProgram(
            candidate=c.index,
            code=c.code,
            final=final_turn == 0 and c.code == final_code and c.selected,
            nlex=judged_nlex(run, c.index, 0),
        )
        for c in candidates
    ]
    if final_turn:
        chosen = run.final_candidate if run.final_candidate is not None else run.selected.get("candidate", 0)
        programs.append(
            RealProgram(
                candidate=chosen,
                code=final_code,
                turn=final_turn,
                final=True,
                nlex=judged_nlex(run, chosen, final_turn),
            )
        )
    return programs


def _final(run: Run) -> tuple[int | None, str]:
    """(turn, code) of the final program: the last repair turn that wrote it (turn 0: the selected
    candidate); (None, "") when the run has none (it failed or was cancelled before selection)."""
    code = run.final_code
    repaired = RepairTurn.objects.filter(run=run, done=True).exclude(code="").order_by("-turn")
    if not code:  # not finished: the program the run had reached
        last = repaired.first()
        if last is not None:
            return last.turn, last.code
        selected = Candidate.objects.filter(run=run, selected=True).first()
        return (0, selected.code) if selected is not None and selected.code else (None, "")
    for turn in repaired:
        if turn.code == code:
            return turn.turn, code
    return 0, code


def judged_nlex(run: Run, candidate: int, turn: int) -> dict[int, str]:
    """Per public test: the NLEX of the first sample whose prediction the verdict took (else the first
    sample with text)."""
    winners = {v.test: v.simulated for v in Verdict.objects.filter(run=run, candidate=candidate, turn=turn)}
    by_test: dict[int, list[Simulation]] = {}
    for sim in Simulation.objects.filter(run=run, candidate=candidate, turn=turn, done=True).exclude(text=""):
        by_test.setdefault(sim.test, []).append(sim)  # ordered by sample (the model's ordering)
    return {
        test: next(
            (s for s in sims if s.predicted is not None and s.predicted == winners.get(test)), sims[0]
        ).text
        for test, sims in by_test.items()
    }
