"""Where a queued run (or a real execution of one) goes: a Celery worker (REDIS_URL set) or the
in-process thread pool (embedded).

Also the one rule that ties a run's end to "Run for real": a real execution asked for while the run was
active starts when the run ends (finished, failed, cancelled, or reaped as dead), through the
``run_ended`` signal (``start_pending_real``, connected in ``RunsConfig.ready``). The recording layer
sends the signal and never imports this module, so the imports point one way: runner -> tasks -> record.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

from django.conf import settings
from django.db import connections

from webapp.runs import real
from webapp.runs.models import Run
from webapp.runs.tasks import execute_real, execute_real_task, execute_run, execute_run_task


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(settings.INPROCESS_WORKERS, thread_name_prefix="execsim-run")


def _run_in_thread(run_id: str) -> None:
    try:
        execute_run(run_id)
    finally:
        connections.close_all()


def enqueue(run_id: Any) -> None:
    """Queue a run (``tasks.execute_run``)."""
    if settings.TASK_RUNNER == "celery":
        execute_run_task.delay(str(run_id))
    else:
        _pool().submit(_run_in_thread, str(run_id))


def _real_in_thread(run_id: str) -> None:
    try:
        execute_real(run_id)
    finally:
        connections.close_all()


def enqueue_real(run_id: Any) -> None:
    """Queue "Run for real" on a run (``tasks.execute_real``)."""
    if settings.TASK_RUNNER == "celery":
        execute_real_task.delay(str(run_id))
    else:
        _pool().submit(_real_in_thread, str(run_id))


def start_pending_real(sender: Any, run: Run, **kwargs: Any) -> None:
    """Receiver of ``run_ended``: queue the real execution asked for while ``run`` was active, if one
    is. A request with nothing to run was already dropped before the final event was shown
    (``real.forget_if_nothing_to_run``), so this queues only work there is."""
    if real.pending(run.id):
        enqueue_real(run.id)
