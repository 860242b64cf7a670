"""Where a queued run (or a real execution of one) goes: a Celery worker (REDIS_URL set) or the
in-process runner (embedded).

The in-process runner is fair between users (issue 51, item 9: one user's queue of runs and Run for
real made another user's trivial run wait 148 s): a queue per user, served in turn (``FairRunner``).
Each user runs at most ``min(EXECSIM_MAX_CONCURRENT_RUNS, EXECSIM_INPROCESS_WORKERS - 1)`` pieces of
work at once (at least one), so with two or more workers one is always left for another user's run.
Under Celery, one shared queue: a user has at most EXECSIM_MAX_CONCURRENT_RUNS pieces of work queued or
running (the start-time limit counts Run for real too), so another user's task waits behind at most
that many of each other user's; with worker concurrency above the limit it starts at once.

Also the one rule that ties a run's end to "Run for real": a real execution asked for while the run was
active starts when the run ends (finished, failed, cancelled, or reaped as dead), through the
``run_ended`` signal (``start_pending_real``, connected in ``RunsConfig.ready``). The recording layer
sends the signal and never imports this module, so the imports point one way: runner -> tasks -> record.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

from django.conf import settings
from django.db import connections

from webapp.runs import real
from webapp.runs.models import Run
from webapp.runs.tasks import execute_real, execute_real_task, execute_run, execute_run_task

log = logging.getLogger(__name__)


class FairRunner:
    """Runs jobs on ``workers`` threads, fairly between users: a FIFO queue per user; when a thread is
    free, the next job comes from the user with queued work who was served longest ago (never served
    first), so users take turns whatever the order their work arrived in; and no user has more than
    ``per_user`` jobs running at once. A job's exception is logged; the thread goes on."""

    def __init__(self, workers: int, per_user: int) -> None:
        self.workers, self.per_user = workers, per_user
        self._lock = threading.Lock()
        self._queues: dict[Any, deque[Callable[[], Any]]] = {}
        self._running: Counter[Any] = Counter()
        self._served: dict[Any, int] = {}  # user -> the turn they were last served at
        self._turn = 0
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix="execsim-run")

    def submit(self, user: Any, job: Callable[[], Any]) -> None:
        with self._lock:
            self._queues.setdefault(user, deque()).append(job)
            self._dispatch()

    def _dispatch(self) -> None:
        """Start queued jobs while threads are free (the lock held)."""
        while sum(self._running.values()) < self.workers:
            ready = [user for user in self._queues if self._running[user] < self.per_user]
            if not ready:
                return
            user = min(ready, key=lambda u: self._served.get(u, -1))
            queue = self._queues[user]
            job = queue.popleft()
            if not queue:
                del self._queues[user]
            self._running[user] += 1
            self._served[user] = self._turn
            self._turn += 1
            self._threads.submit(self._run, user, job)

    def _run(self, user: Any, job: Callable[[], Any]) -> None:
        try:
            job()
        except Exception:
            log.exception("a queued job of user %s failed", user)
        finally:
            with self._lock:
                self._running[user] -= 1
                if not self._running[user]:
                    del self._running[user]
                self._dispatch()


@cache
def _scheduler() -> FairRunner:
    workers = settings.INPROCESS_WORKERS
    per_user = min(settings.EXECSIM_MAX_CONCURRENT_RUNS, max(1, workers - 1))
    return FairRunner(workers, per_user)


def _owner(run_id: Any) -> Any:
    """Whose queue a run's work goes to: the run's user."""
    return Run.objects.filter(id=run_id).values_list("user_id", flat=True).first()


def _closing(job: Callable[..., Any], *args: Any) -> None:
    try:
        job(*args)
    finally:
        connections.close_all()


def in_background(user_id: Any, task: Any, job: Callable[..., Any], *args: Any) -> None:
    """The one place that decides where background work runs: the Celery ``task`` on a worker
    (REDIS_URL set), or its body ``job(*args)`` on the in-process threads, in ``user_id``'s queue
    (taken in turn with other users'), its thread's database connections closed after. Raises when
    the broker cannot be reached."""
    if settings.TASK_RUNNER == "celery":
        task.delay(*args)
    else:
        _scheduler().submit(user_id, lambda: _closing(job, *args))


def enqueue(run_id: Any) -> None:
    """Queue a run (``tasks.execute_run``)."""
    in_background(_owner(run_id), execute_run_task, execute_run, str(run_id))


def enqueue_real(run_id: Any) -> None:
    """Queue "Run for real" on a run (``tasks.execute_real``), in its user's queue like their runs."""
    in_background(_owner(run_id), execute_real_task, execute_real, str(run_id))


def start_pending_real(sender: Any, run: Run, **kwargs: Any) -> None:
    """Receiver of ``run_ended``: queue the real execution asked for while ``run`` was active, if one
    is. A request with nothing to run was already dropped before the final event was shown
    (``real.forget_if_nothing_to_run``), so this queues only work there is."""
    if real.pending(run.id):
        enqueue_real(run.id)
