"""Run for real on an existing run: which programs to execute (from the run's rows), and the flag
that says a real execution of the run was asked for and has not ended yet.

The programs are every candidate that has code (turn 0) and the run's final program (the last repaired
one, turn t; or the selected candidate itself when no repair changed it), each with the NLEX that was
judged on each public test, so that
``simulator.pipeline.real_execution.execute_programs`` can show where the simulation first diverged.

The flag lives in the cache (Redis in production, shared with the Celery workers; in-process memory in
embedded mode, where the task runs in the same process). It expires after ``FLAG_SECONDS`` without an
event, so a worker that died does not block the button for ever. Each flag is also listed under the user
who asked for it (``under_way_for``): a Run for real is work in progress that counts against its user's
limits like a run (``webapp.limits.check_can_start_run``; issue 51, item 9).

This module imports only the models and the cache, so every layer may read the flag (the page's context,
the recording of a run's final event, the task) without an import circle. A request made while the run
is active is started by the run's end: ``webapp.runs.runner.start_pending_real``, a receiver of the
``run_ended`` signal (``webapp.runs.signals``).
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache

from simulator.pipeline.real_execution import RealProgram
from simulator.source import same_program
from webapp.runs.models import Candidate, Execution, Run

FLAG_SECONDS = 600
_KEY = "execsim:run-real:{}"
_USER_KEY = "execsim:run-real-user:{}"  # the runs whose Run for real a user asked for (flags may lapse)
_USER_KEY_SECONDS = 24 * 3600


def request(run_id: Any, user_pk: Any = None) -> bool:
    """Mark a real execution of the run as asked for (by ``user_pk``, whose work in progress it then
    is); False if one is already pending or under way."""
    if not cache.add(_KEY.format(run_id), "1", timeout=FLAG_SECONDS):
        return False
    if user_pk is not None:
        listed = sorted({str(run_id), *under_way_for(user_pk)})
        cache.set(_USER_KEY.format(user_pk), listed, timeout=_USER_KEY_SECONDS)
    return True


def under_way_for(user_pk: Any) -> set[str]:
    """The runs (ids as text) whose Run for real ``user_pk`` asked for and that have not ended: asked
    for during a run, waiting in a queue, or running. Ended ones (their flag cleared or lapsed) are
    dropped from the list as it is read. Two requests at the same instant may miss one another, as
    the other limits' counts may."""
    key = _USER_KEY.format(user_pk)
    listed = cache.get(key) or []
    flags = cache.get_many([_KEY.format(run_id) for run_id in listed])
    live = [run_id for run_id in listed if _KEY.format(run_id) in flags]
    if len(live) != len(listed):
        cache.set(key, live, timeout=_USER_KEY_SECONDS)
    return set(live)


def touch(run_id: Any) -> None:
    """Keep the flag of a pending or running real execution alive (``FLAG_SECONDS`` more)."""
    cache.set(_KEY.format(run_id), "1", timeout=FLAG_SECONDS)


def pending(run_id: Any) -> bool:
    """Whether a real execution of the run was asked for and has not ended (nor expired)."""
    return cache.get(_KEY.format(run_id)) is not None


def clear(run_id: Any) -> None:
    """Drop the flag: the real execution ended, or there is nothing to run."""
    cache.delete(_KEY.format(run_id))


def forget_if_nothing_to_run(run: Run) -> None:
    """At the run's end, before its final event is shown (``record.record_and_publish``): a request for
    a run that ended without a candidate to execute (it failed or was cancelled first) is dropped, so the
    page says so at once instead of "Running ... for real" until a reload."""
    if pending(run.id) and (run.kind != "solve" or not programs_for(run)):
        clear(run.id)


def programs_for(run: Run) -> list[RealProgram]:
    """The run's candidates with code and its final program when a repair produced it, less those that
    already ran for real (the final program of a run made with "Also run for real" ran on every test)
    and copies of one that did (``source.same_program``: the same program runs the same way),
    in the page's order (candidate, then turn: ``Execution.Meta.ordering``): the rows arrive live in the
    order a reload shows them, the repaired program right after the candidate it came from."""
    candidates = [c for c in Candidate.objects.filter(run=run).order_by("index") if c.code]
    final_turn, final_code = run.final_program()
    judged = {"verdicts": list(run.verdicts.all()), "simulations": list(run.simulations.all())}
    programs = [
        RealProgram(
            candidate=c.index,
            code=c.code,
            final=final_turn == 0 and c.code == final_code and c.selected,
            nlex=run.judged_nlex(c.index, 0, **judged),
        )
        for c in candidates
    ]
    if final_turn:
        chosen = run.chosen_candidate
        programs.append(
            RealProgram(
                candidate=chosen,
                code=final_code,
                turn=final_turn,
                final=True,
                nlex=run.judged_nlex(chosen, final_turn, **judged),
            )
        )
    ran = set(Execution.objects.filter(run=run).values_list("candidate", "turn"))
    kind = run.core_problem().kind
    ran_codes = [p.code for p in programs if (p.candidate, p.turn) in ran]
    todo = [
        p
        for p in programs
        if (p.candidate, p.turn) not in ran and not any(same_program(p.code, c, kind) for c in ran_codes)
    ]
    return sorted(todo, key=lambda p: (p.candidate, p.turn))
