"""Running a run: the one task function both the Celery worker and the in-process runner call.

``execute_run(run_id)`` drives the pipeline's async generator in its own event loop. Every event is
recorded (then broadcast) on one dedicated database thread, in order. Alongside, a watcher thread:
- touches ``Run.heartbeat_at`` every EXECSIM_HEARTBEAT_SECONDS (a SIGKILLed worker stops doing so, and
  ``record.reap_stale_runs`` marks the run failed after EXECSIM_STALE_RUN_SECONDS);
- polls the cancel signal, and sets the asyncio.Event the pipeline receives as ``cancel``.
A pipeline that ignores a cancel for EXECSIM_CANCEL_GRACE_SECONDS is closed and the run marked cancelled;
an exception or a stream that ends without a final event marks the run failed. Nothing is left running.
The run's final event, however it comes, is followed by the ``run_ended`` signal (``record``).

Outages (issue 51, item 16): a live broadcast that fails never fails a run (``record.publish`` logs it;
pages replay the stored events when they reconnect); the watcher keeps beating and polling through a
Redis or database failure; a run stopped by the database going away is failed with a message naming
the database once it answers again (``_end_run`` retries), not left for the reaper to call dead.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import connections
from django.utils import timezone

from simulator.pipeline.executor import LocalExecutor
from simulator.pipeline.real_execution import RealProgram, execute_programs
from simulator.problem import Problem
from webapp.celery import app
from webapp.errors import service_down
from webapp.limits import sandbox_share_async
from webapp.runs import cancel as cancel_signal
from webapp.runs import real
from webapp.runs.models import Run, RunEvent
from webapp.runs.pipeline import load_pipeline, make_client, program_for_simulation
from webapp.runs.record import append_final, event_dict, note_stop_reason, record_and_publish

log = logging.getLogger(__name__)

OUTAGE_RETRY_SECONDS = 2.0  # how often a run held up by the database tries again to record an event
OUTAGE_EVENT_SECONDS = 60.0  # how long an event waits for the database; then the run stops, failed
OUTAGE_GIVE_UP_SECONDS = 600.0  # how long its failure waits; then the reaper ends it with the reason noted


@app.task(name="webapp.runs.execute_run", ignore_result=True)
def execute_run_task(run_id: str) -> None:
    execute_run(run_id)


def execute_run(run_id: str) -> str:
    """Run one queued run to its end; returns its final status."""
    claimed = Run.objects.filter(id=run_id, status=Run.QUEUED).update(
        status=Run.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now()
    )
    if not claimed:  # cancelled before it started, or already taken
        return Run.objects.get(id=run_id).status
    run = Run.objects.select_related("problem").get(id=run_id)
    try:
        subject = _subject_for(run)
        pipeline = load_pipeline(run.kind)
        run_settings = run.pipeline_settings
        client = make_client(run.settings.get("model"))  # no connection until the pipeline uses it
        executor = SharedExecutor(LocalExecutor(), run.user_id)
    except Exception as exc:  # a configuration problem: say so on the run, do not crash the worker
        log.exception("run %s could not start", run_id)
        append_final(
            run_id, "run_failed", error=type(exc).__name__, message=f"The run could not start: {exc}"
        )
        return Run.objects.get(id=run_id).status
    try:
        given = {"code": run.code} if run.kind == "solve" and run.code else {}  # the user's own program
        asyncio.run(_drive(str(run.id), pipeline, subject, run_settings, client, executor=executor, **given))
    finally:
        try:
            cancel_signal.clear(run_id)
        except Exception as exc:  # Redis down: the signal expires by itself (cancel.signal's expiry)
            log.warning("run %s: its cancel signal was not cleared: %s", run_id, exc)
        connections.close_all()
    return Run.objects.get(id=run_id).status


def _subject_for(run: Run) -> Any:
    """What the pipeline works on: the Problem, or the pasted Program for "Simulate my code"."""
    if run.kind == "simulate":
        return program_for_simulation(run.code, run.code_input, run.settings.get("mode", "call"))
    return run.core_problem()


async def _drive(
    run_id: str, pipeline: Any, subject: Any, run_settings: Any, client: Any, **extra: Any
) -> None:
    loop = asyncio.get_running_loop()
    db = ThreadPoolExecutor(1, thread_name_prefix=f"run-db-{run_id[:8]}")
    cancel = asyncio.Event()
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(run_id, loop, cancel, stop), daemon=True)
    watcher.start()
    gen = pipeline(subject, run_settings, client, run_id=run_id, cancel=cancel, **extra)
    ended = False
    try:
        deadline: float | None = None
        while True:
            nxt = asyncio.ensure_future(gen.__anext__())
            while not nxt.done():
                if cancel.is_set() and deadline is None:
                    deadline = loop.time() + settings.EXECSIM_CANCEL_GRACE_SECONDS
                waiters: set[asyncio.Future[Any]] = {nxt}
                if deadline is None:
                    waiters.add(asyncio.ensure_future(cancel.wait()))
                timeout = None if deadline is None else max(0.0, deadline - loop.time())
                await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                for waiter in waiters - {nxt}:
                    waiter.cancel()
                if deadline is not None and not nxt.done() and loop.time() >= deadline:
                    nxt.cancel()
                    await asyncio.gather(nxt, return_exceptions=True)
                    await loop.run_in_executor(
                        db, lambda: _end_run(run_id, "run_cancelled", reason="cancelled by the user")
                    )
                    ended = True
                    return
            try:
                event = nxt.result()
            except StopAsyncIteration:
                break
            if not await loop.run_in_executor(db, _record, run_id, event):
                ended = True  # the run was ended elsewhere (reaped); stop quietly
                return
            if getattr(event, "is_final", False) or (
                isinstance(event, dict) and event["type"].startswith("run_f")
            ):
                ended = True
                return
    except Exception as exc:
        log.exception("run %s failed", run_id)
        error, message = failure(exc)
        await loop.run_in_executor(db, lambda: _end_run(run_id, "run_failed", error=error, message=message))
        ended = True
    finally:
        stop.set()
        try:
            await gen.aclose()
        except Exception:  # a generator broken by the cancel above; nothing more to save
            log.debug("pipeline close failed", exc_info=True)
        if client is not None and hasattr(client, "aclose"):
            await client.aclose()
        if not ended:
            await loop.run_in_executor(
                db,
                lambda: _end_run(
                    run_id,
                    "run_failed",
                    error="no_final_event",
                    message="The pipeline stopped without a result.",
                ),
            )
        await loop.run_in_executor(db, connections.close_all)
        db.shutdown(wait=True)
        watcher.join(timeout=5)


def failure(exc: BaseException) -> tuple[str, str]:
    """The ``run_failed`` event's error and message for an exception that stopped a run. A service that
    was down is named, and nothing else of the driver's text is kept: it holds the service's address
    ("Error 111 connecting to 127.0.0.1:6379"), which named no service and showed on share links."""
    service = service_down(exc)
    if service is None:
        return type(exc).__name__, f"{type(exc).__name__}: {exc}"
    error = "database_unreachable" if service == "the database" else "redis_unreachable"
    return error, f"{service[0].upper()}{service[1:]} was not reachable, so the run stopped. Retry it."


def _record(run_id: str, event: Any) -> bool:
    """``record_and_publish`` through a short outage of the database (a restart, a dropped connection):
    tried again every OUTAGE_RETRY_SECONDS, on a fresh connection, for up to OUTAGE_EVENT_SECONDS, the
    pipeline waiting meanwhile. An event whose commit went through before the connection broke is found
    in the table and not recorded twice (its seq holding another event: the run was ended elsewhere, as
    ``record_and_publish`` answers). After that the error goes up and the run fails, saying so."""
    data = event_dict(event)
    deadline = time.monotonic() + OUTAGE_EVENT_SECONDS
    while True:
        try:
            return record_and_publish(run_id, event)
        except Exception as exc:
            if service_down(exc) is None or time.monotonic() >= deadline:
                raise
            log.warning("run %s: event %s waits (%s); trying again", run_id, data["seq"], _what_failed(exc))
        connections.close_all()
        time.sleep(OUTAGE_RETRY_SECONDS)
        try:
            stored = RunEvent.objects.filter(run_id=run_id, seq=data["seq"]).values_list("type", flat=True)
            found = stored.first()
        except Exception as exc:
            if service_down(exc) is None:
                raise
            connections.close_all()  # still down: the next try says so
            continue
        if found is not None:
            return bool(found == data["type"])


def _what_failed(exc: BaseException) -> str:
    """A log line's words for an error: "Redis is not reachable", or the error itself."""
    service = service_down(exc)
    return f"{service} is not reachable" if service else f"{type(exc).__name__}: {exc}"


def _end_run(run_id: str, type: str, **payload: Any) -> bool:
    """``append_final`` through an outage of the database: tried again every OUTAGE_RETRY_SECONDS, on a
    fresh connection, until it answers (the watcher keeps the heartbeat going meanwhile, so the reaper
    leaves the run alone). After OUTAGE_GIVE_UP_SECONDS the reason is noted for the reaper, which ends
    the run when the database is back, and the error goes up. Any other error goes up at once."""
    deadline = time.monotonic() + OUTAGE_GIVE_UP_SECONDS
    while True:
        try:
            return append_final(run_id, type, **payload)
        except Exception as exc:
            if service_down(exc) is None:
                raise
            if time.monotonic() >= deadline:
                note_stop_reason(run_id, *failure(exc))
                raise
            log.warning("run %s: its end is not recorded yet (%s); trying again", run_id, _what_failed(exc))
            connections.close_all()
            time.sleep(OUTAGE_RETRY_SECONDS)


def _watch(
    run_id: str, loop: asyncio.AbstractEventLoop, cancel: asyncio.Event, stop: threading.Event
) -> None:
    """Heartbeat and cancel polling, on a thread of its own (it keeps beating while the loop waits).
    A failure of Redis (the cancel signal) or the database (the heartbeat) is logged once and tried
    again on the next poll: a watcher that stopped at the first one left a healthy run without
    heartbeats, for the reaper to fail as dead."""
    beat = settings.EXECSIM_HEARTBEAT_SECONDS
    poll = min(0.25, beat)
    next_beat = 0.0
    elapsed = 0.0
    failing: set[str] = set()

    def attempt(what: str, step: Any) -> Any:
        try:
            result = step()
        except Exception as exc:
            if what not in failing:
                log.warning("run %s: %s failed (%s); trying again", run_id, what, _what_failed(exc))
                failing.add(what)
            connections.close_all()  # a broken connection is not reused
            return None
        failing.discard(what)
        return result

    def heartbeat() -> bool:
        Run.objects.filter(id=run_id, status=Run.RUNNING).update(heartbeat_at=timezone.now())
        return Run.objects.filter(id=run_id, cancel_requested=True).exists()

    try:
        while not stop.wait(poll):
            elapsed += poll
            requested = attempt("polling the cancel signal", lambda: cancel_signal.signalled(run_id))
            if elapsed >= next_beat:
                next_beat = elapsed + beat
                requested = attempt("the heartbeat", heartbeat) or requested
            if requested and not cancel.is_set():
                loop.call_soon_threadsafe(cancel.set)
    finally:
        connections.close_all()


# -- "Run for real" on an existing run (webapp.runs.real; simulator.pipeline.real_execution) -------


@app.task(name="webapp.runs.execute_real", ignore_result=True)
def execute_real_task(run_id: str) -> None:
    execute_real(run_id)


def execute_real(run_id: str, executor: Any = None) -> str:
    """Run a run's programs for real and append the events to its log (next seq), recorded and
    broadcast like the pipeline's. A run still queued or running is waited for: the run's end queues
    this again (the ``run_ended`` signal, ``runner.start_pending_real``), since the pipeline owns the
    next seqs until then. Returns ``waiting``, ``done``, ``nothing`` (no program to run, or the request
    expired) or ``superseded`` (another real execution of the run took the seq)."""
    run = Run.objects.select_related("problem").get(id=run_id)
    if not real.pending(run_id):
        return "nothing"
    if run.is_active:  # its end queues this again (run_ended -> runner.start_pending_real)
        real.touch(run_id)
        return "waiting"
    programs = real.programs_for(run) if run.kind == "solve" else []
    if not programs:
        real.clear(run_id)
        return "nothing"
    try:
        problem = run.core_problem()
        shared = SharedExecutor(executor or _real_executor(), run.user_id)
        return asyncio.run(_drive_real(run, problem, programs, shared))
    finally:
        _flag(real.clear, run_id)
        connections.close_all()


def _flag(step: Any, run_id: Any) -> None:
    """Touch or clear the Run for real flag (``webapp.runs.real``, in Redis in production): a failure is
    logged, not raised; the executions go on and the flag expires by itself (``real.FLAG_SECONDS``)."""
    try:
        step(run_id)
    except Exception as exc:
        log.warning("run %s: the Run for real flag was not updated: %s", run_id, _what_failed(exc))


class SharedExecutor:
    """An executor (``simulator.pipeline.executor.Executor``) whose programs take places in their user's
    share of the sandbox pool (``webapp.limits.sandbox_share_async``: EXECSIM_MAX_PROGRAMS_PER_USER at
    once in this process), so one user's runs and Run for real leave workers to other users' programs
    and explorer traces (issue 51, item 9). ``verify`` is the inner executor's."""

    def __init__(self, inner: Any, user_pk: Any) -> None:
        self.inner, self.user_pk = inner, user_pk

    async def execute(self, program: Any, *, trace: bool) -> Any:
        async with sandbox_share_async(self.user_pk):
            return await self.inner.execute(program, trace=trace)

    def verify(self, nlex: str, result: Any, program: Any) -> Any:
        return self.inner.verify(nlex, result, program)


def _real_executor() -> Any:
    """``settings.EXECSIM_REAL_EXECUTOR`` (a dotted path to a class; tests name a double), else the
    sandbox (``simulator.pipeline.executor.LocalExecutor``)."""
    path = getattr(settings, "EXECSIM_REAL_EXECUTOR", "")
    if not path:
        return LocalExecutor()
    module_name, _, attr = path.replace(":", ".").rpartition(".")
    return getattr(importlib.import_module(module_name), attr)()


async def _drive_real(run: Run, problem: Problem, programs: list[RealProgram], executor: Any) -> str:
    loop = asyncio.get_running_loop()
    db = ThreadPoolExecutor(1, thread_name_prefix=f"run-real-{run.id.hex[:8]}")
    events = execute_programs(
        problem, programs, run_id=str(run.id), start_seq=run.last_seq + 1, executor=executor
    )
    try:
        async for event in events:
            if event.type == "stage" and event.payload.get("state") == "finished":
                await loop.run_in_executor(db, _flag, real.clear, run.id)  # the page renders the button again
            else:
                await loop.run_in_executor(db, _flag, real.touch, run.id)
            if not await loop.run_in_executor(
                db, lambda e=event: record_and_publish(run.id, e, after_end=True)
            ):
                return "superseded"
        return "done"
    finally:
        await events.aclose()
        await loop.run_in_executor(db, connections.close_all)
        db.shutdown(wait=True)
