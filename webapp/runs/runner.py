"""Where a queued run (or a real execution of one) goes: a Celery worker (REDIS_URL set) or the
in-process thread pool (embedded). The tasks are imported lazily and never import this module back:
a real execution asked for during a run is queued by the run's final event (``record``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

from django.conf import settings
from django.db import connections


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(settings.INPROCESS_WORKERS, thread_name_prefix="execsim-run")


def _run_in_thread(run_id: str) -> None:
    from webapp.runs.tasks import execute_run

    try:
        execute_run(run_id)
    finally:
        connections.close_all()


def enqueue(run_id: Any) -> None:
    if settings.TASK_RUNNER == "celery":
        from webapp.runs.tasks import execute_run_task

        execute_run_task.delay(str(run_id))
    else:
        _pool().submit(_run_in_thread, str(run_id))


def _real_in_thread(run_id: str) -> None:
    from webapp.runs.tasks import execute_real

    try:
        execute_real(run_id)
    finally:
        connections.close_all()


def enqueue_real(run_id: Any) -> None:
    """Queue "Run for real" on a run (``tasks.execute_real``)."""
    if settings.TASK_RUNNER == "celery":
        from webapp.runs.tasks import execute_real_task

        execute_real_task.delay(str(run_id))
    else:
        _pool().submit(_real_in_thread, str(run_id))
