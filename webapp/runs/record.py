"""Recording a run's events: persist the RunEvent row, update the denormalised rows the pages read, and
only then broadcast the event to the run's Channels group (so a reconnecting page can always replay).

Also: appending a final event on the host's behalf (a crash, a cancel the pipeline ignored, a worker
that stopped sending heartbeats).

A run's final event, whoever appends it, is followed by the ``run_ended`` signal (``webapp.runs.signals``):
what reacts to a run's end (a pending Run for real, the annotation queue) listens to it, so this layer
imports neither the runner nor the tasks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from simulator.pipeline.events import FINAL_TYPES, Event
from webapp import broadcast
from webapp.errors import service_down
from webapp.runs import real
from webapp.runs.models import Candidate, Execution, RepairTurn, Run, RunEvent, Simulation, Verdict
from webapp.runs.render import render_message
from webapp.runs.signals import run_ended
from webapp.text import storable

log = logging.getLogger(__name__)

DONE_STATUSES = (Run.FINISHED, Run.FAILED, Run.CANCELLED)


def event_dict(event: Event | dict[str, Any]) -> dict[str, Any]:
    if isinstance(event, Event):
        return {"run_id": event.run_id, "seq": event.seq, "type": event.type, "payload": event.payload}
    return {
        "run_id": event["run_id"],
        "seq": event["seq"],
        "type": event["type"],
        "payload": event["payload"],
    }


def record_and_publish(run_id: Any, event: Event | dict[str, Any], *, after_end: bool = False) -> bool:
    """Persist then broadcast one event. False when the run already ended (the caller should stop).

    ``after_end``: the event is appended to a run that has *ended* ("Run for real" after the fact,
    ``webapp.runs.real``); False while the run is still active (its pipeline owns the next seqs) and
    for final events (a run has exactly one)."""
    data = storable(event_dict(event))  # NUL, lone surrogates: escaped for the database and the sockets
    try:
        with transaction.atomic():
            run = Run.objects.select_for_update().get(id=run_id)
            if after_end:
                if run.status not in DONE_STATUSES or data["type"] in FINAL_TYPES:
                    return False
            elif run.status in DONE_STATUSES:
                return False
            RunEvent.objects.create(run=run, seq=data["seq"], type=data["type"], payload=data["payload"])
            apply_event(run, data["type"], data["payload"])
            run.last_seq = max(run.last_seq, data["seq"])
            run.heartbeat_at = timezone.now()
            run.save()
    except IntegrityError:  # the seq was taken: someone else (the reaper) ended this run meanwhile
        return False
    final = data["type"] in FINAL_TYPES
    if final:  # before the final event is rendered, so that its page says at once there is nothing to run
        try:
            real.forget_if_nothing_to_run(run)
        except Exception as exc:  # the flag lives in Redis; the event is recorded, the flag expires
            log.warning("run %s: the Run for real flag was not checked: %s", run.id, _unreachable(exc))
    publish(run, data)
    if final:
        send_run_ended(run)
    return True


def send_run_ended(run: Run) -> None:
    """Tell the receivers of ``run_ended`` that ``run`` ended (its final event is recorded and broadcast):
    a real execution asked for during the run starts now (``runner.start_pending_real``). A receiver
    that fails is logged: the run's end is recorded whatever its listeners do."""
    for receiver, outcome in run_ended.send_robust(sender=Run, run=run):
        if isinstance(outcome, Exception):
            log.error("run %s: run_ended receiver %r failed", run.id, receiver, exc_info=outcome)


def publish(run: Run, data: dict[str, Any]) -> None:
    """Broadcast a recorded event with its HTML, rendered here once for all its viewers (``html``, and
    ``html_readonly`` when share-link readers see something else). Should rendering fail, the event
    goes out without HTML and each consumer renders it from the database."""
    data = {**data, "run_id": str(run.id)}
    message: dict[str, Any] = {"type": "run.event", "event": data}
    try:
        owner, reader = render_message(run, data)
    except Exception:
        log.exception("rendering event %s of run %s failed", data["seq"], run.id)
    else:
        message["html"] = owner
        if reader != owner:
            message["html_readonly"] = reader
    try:
        broadcast.group_send(run.group_name, message)
    except Exception as exc:
        # Redis (the channel layer) down or too slow: the event is stored, so the run goes on, and its
        # pages catch up from the database when their socket reconnects (webapp.runs.live replays
        # from their last seq). A broadcast failure never fails a run (issue 51, item 16).
        log.warning("run %s: live broadcast of event %s failed: %s", run.id, data["seq"], _unreachable(exc))


def _unreachable(exc: BaseException) -> str:
    """A log line's words for a failure of a service: "Redis is not reachable (…)", else the error."""
    service = service_down(exc)
    detail = f"{type(exc).__name__}: {exc}"
    return f"{service[0].upper()}{service[1:]} is not reachable ({detail})" if service else detail


def append_final(run_id: Any, type: str, **payload: Any) -> bool:
    """End a run with an event of our own (next seq). False if it had already ended."""
    assert type in FINAL_TYPES
    for _ in range(3):  # the pipeline may be racing us for the next seq
        run = Run.objects.get(id=run_id)
        if run.status in DONE_STATUSES:
            return False
        data = {"run_id": str(run.id), "seq": run.last_seq + 1, "type": type, "payload": payload}
        if record_and_publish(run.id, data):
            return True
    return False


_STOP_REASON = "execsim:run-stopped:{}"


def note_stop_reason(run_id: Any, error: str, message: str) -> None:
    """Leave the reaper the reason a worker could not record for its run's end (the database stayed
    away longer than the task waits for it: ``tasks._end_run``), so the run's message says what happened
    rather than that the worker stopped responding. Kept in the cache for a day; lost with Redis."""
    try:
        cache.set(_STOP_REASON.format(run_id), {"error": error, "message": message}, timeout=24 * 3600)
    except Exception as exc:
        log.warning("run %s: its stop reason was not noted: %s", run_id, _unreachable(exc))


def _stop_reason(run_id: Any) -> dict[str, str] | None:
    try:
        reason = cache.get(_STOP_REASON.format(run_id))
    except Exception:  # Redis down: the reaper says what it knows
        return None
    return reason if isinstance(reason, dict) else None


def reap_stale_runs() -> list[str]:
    """Mark failed every running run whose heartbeat is older than EXECSIM_STALE_RUN_SECONDS (its worker
    died or hung), with the reason its worker noted if it noted one (``note_stop_reason``). The reaper
    calls it: ``manage.py reap_runs`` every 30 s in production (the Procfile's ``reaper``), a thread of
    ``execsim up`` in embedded mode; pages only read. Each reaped run ends like any other
    (``append_final``): ``run_ended`` is sent, and a Run for real asked for meanwhile starts."""
    cutoff = timezone.now() - timezone.timedelta(seconds=settings.EXECSIM_STALE_RUN_SECONDS)
    stale = Run.objects.filter(status=Run.RUNNING, heartbeat_at__lt=cutoff).values_list("id", flat=True)
    reaped = []
    for run_id in list(stale):
        reason = _stop_reason(run_id) or {
            "error": "worker_lost",
            "message": (
                f"The worker running this run stopped responding (no heartbeat for "
                f"{settings.EXECSIM_STALE_RUN_SECONDS:g} s). Retry it."
            ),
        }
        if append_final(run_id, "run_failed", **reason):
            reaped.append(str(run_id))
    return reaped


def apply_event(run: Run, type: str, p: dict[str, Any]) -> None:
    """Update the denormalised rows for one event (the Run itself is saved by the caller)."""
    handler = HANDLERS.get(type)
    if handler is not None:
        handler(run, p)


def _run_started(run: Run, p: dict[str, Any]) -> None:
    run.status = Run.RUNNING
    run.provenance = p.get("provenance") or {}
    run.started_at = run.started_at or timezone.now()


def _stage(run: Run, p: dict[str, Any]) -> None:
    """Keyed by stage, and by repair turn for the re-simulations of turn t."""
    name = p.get("stage", "?") + (f" (turn {p['turn']})" if p.get("turn") else "")
    rerun = p.get("rerun") and p.get("state") == "started"  # "Run for real": a fresh stage
    before = {} if rerun else run.stages.get(name, {})
    stage = {**before, **{k: v for k, v in p.items() if k != "stage"}}
    run.stages = {**run.stages, name: stage}
    # "Run for real" runs only programs that have no rows yet (``real.programs_for``): the rows of
    # those that ran (the final program of a run made with "Also run for real") stay


def _append_text(model: Any, text: str, **key: Any) -> None:
    """A streamed chunk: appended to the text of the row ``key`` names (made when it is the first)."""
    row, _ = model.objects.get_or_create(**key)
    row.text += text
    row.save(update_fields=["text"])


def _candidate_delta(run: Run, p: dict[str, Any]) -> None:
    _append_text(Candidate, p.get("text", ""), run=run, index=p["candidate"])


def _candidate_done(run: Run, p: dict[str, Any]) -> None:
    Candidate.objects.update_or_create(
        run=run,
        index=p["candidate"],
        defaults={
            "text": p.get("text", ""),
            "code": p.get("code") or "",
            "parse_error": p.get("parse_error") or "",
            "tokens": p.get("tokens") or 0,
            "finish_reason": p.get("finish_reason") or "",
            "done": True,
        },
    )


def _simulation_delta(run: Run, p: dict[str, Any]) -> None:
    _append_text(
        Simulation,
        p.get("text", ""),
        run=run,
        turn=p.get("turn", 0),
        candidate=p["candidate"],
        test=p["test"],
        sample=p.get("sample", 0),
    )


def _simulation_done(run: Run, p: dict[str, Any]) -> None:
    Simulation.objects.update_or_create(
        run=run,
        turn=p.get("turn", 0),
        candidate=p["candidate"],
        test=p["test"],
        sample=p.get("sample", 0),
        defaults={
            "text": p.get("text", ""),
            "predicted": p.get("predicted"),
            "parse_error": p.get("parse_error") or "",
            "tokens": p.get("tokens") or 0,
            "cut": bool(p.get("cut")),
            "forced": bool(p.get("forced")),
            "copied": p.get("copied") or "",
            "done": True,
        },
    )


def _verdict(run: Run, p: dict[str, Any]) -> None:
    Verdict.objects.update_or_create(
        run=run,
        turn=p.get("turn", 0),
        candidate=p["candidate"],
        test=p["test"],
        defaults={
            "expected": p.get("expected", ""),
            "simulated": p.get("simulated"),
            "match": bool(p.get("match")),
            "source": p.get("source") or "simulated",
            "reason": p.get("reason") or "",
            "real": p.get("real"),
        },
    )


def _selected(run: Run, p: dict[str, Any]) -> None:
    run.selected = p
    if p.get("seed") is not None:
        run.seed = p["seed"]
    scores = p.get("scores") or {}
    items = scores.items() if isinstance(scores, dict) else enumerate(scores)
    for index, score in items:
        Candidate.objects.filter(run=run, index=int(index)).update(score=score)
    Candidate.objects.filter(run=run).update(selected=False)
    Candidate.objects.filter(run=run, index=p.get("candidate")).update(selected=True)


def _repair_delta(run: Run, p: dict[str, Any]) -> None:
    _append_text(RepairTurn, p.get("text", ""), run=run, turn=p["turn"])


def _repair_turn(run: Run, p: dict[str, Any]) -> None:
    RepairTurn.objects.update_or_create(
        run=run,
        turn=p["turn"],
        defaults={
            "text": p.get("text", ""),
            "submitted": bool(p.get("submitted")),
            "code": p.get("code") or "",
            "previous_code": _code_before_turn(run, p["turn"]),
            "feedback": p.get("feedback") or [],
            "parse_error": p.get("parse_error") or "",
            "decided_by": p.get("decided_by") or "model",  # events before guided repair: the model
            "replies": p.get("replies") or [],
            "fix": p.get("fix"),
            "done": True,
        },
    )


def _repair_rejected(run: Run, p: dict[str, Any]) -> None:
    RepairTurn.objects.filter(run=run, turn=p["turn"]).update(rejected=p)


def _execution(run: Run, p: dict[str, Any]) -> None:
    Execution.objects.update_or_create(
        run=run,
        candidate=p["candidate"],
        turn=p.get("turn") or 0,
        test=p["test"],
        defaults={
            "public": bool(p.get("public", True)),
            "status": p.get("status", ""),
            "output": p.get("output") or "",
            "passed": bool(p.get("passed")),
            "expected": p.get("expected"),
            "message": p.get("message") or "",
            "verification": p.get("verification"),
            "seconds": p.get("seconds"),
            "memory_kb": p.get("memory_kb"),
            "traced": bool(p.get("traced")),
        },
    )


def _run_finished(run: Run, p: dict[str, Any]) -> None:
    _end(run, Run.FINISHED)
    run.result = p
    run.final_candidate = p.get("candidate")
    run.final_code = p.get("code") or ""
    run.totals = p.get("totals") or {}


def _run_failed(run: Run, p: dict[str, Any]) -> None:
    _end(run, Run.FAILED)
    run.error = p.get("message") or p.get("error") or "failed"


def _run_cancelled(run: Run, p: dict[str, Any]) -> None:
    _end(run, Run.CANCELLED)
    run.error = p.get("reason") or "cancelled"


def _end(run: Run, status: str) -> None:
    run.status = status
    run.finished_at = timezone.now()


# What each event type (docs/events.md) changes in the rows the pages read; every event is also a RunEvent.
HANDLERS: dict[str, Callable[[Run, dict[str, Any]], None]] = {
    "run_started": _run_started,
    "stage": _stage,
    "candidate_delta": _candidate_delta,
    "candidate_done": _candidate_done,
    "simulation_delta": _simulation_delta,
    "simulation_done": _simulation_done,
    "verdict": _verdict,
    "selected": _selected,
    "repair_delta": _repair_delta,
    "repair_turn": _repair_turn,
    "repair_rejected": _repair_rejected,
    "execution": _execution,
    "run_finished": _run_finished,
    "run_failed": _run_failed,
    "run_cancelled": _run_cancelled,
}


def _code_before_turn(run: Run, turn: int) -> str:
    """The program a repair turn changes: the previous turn's (a fix that was kept), or the selected
    candidate's."""
    previous = (
        RepairTurn.objects.filter(run=run, turn__lt=turn, done=True, rejected__isnull=True)
        .exclude(code="")
        .order_by("-turn")
        .first()
    )
    if previous is not None:
        return previous.code
    selected = Candidate.objects.filter(run=run, selected=True).first()
    return selected.code if selected else ""
