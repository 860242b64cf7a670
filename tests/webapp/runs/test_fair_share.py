"""Every kind of sandbox work counts against its user's limits, and the runner is fair between users
(issue 51, item 9): with two runs active, three more "Run for real" requests were accepted and another
user's trivial run waited 148 s behind them (embedded mode), their explorer trace 33 s.

- A Run for real is work in progress like a run: asked for at the limit it is refused with the limit's
  message; asked for or under way it counts when the user starts another run (one asked for during its
  run follows that run and adds nothing).
- The in-process runner keeps a queue per user and serves the users in turn; no user holds every
  worker, so another user's run starts at once.
- One user's programs run at most EXECSIM_MAX_PROGRAMS_PER_USER at a time in the sandbox pool, their
  explorer traces included, leaving workers to other users' programs and traces.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from django.core.cache import cache
from django.test import override_settings

from tests.simulator.pipeline.pipeline_doubles import ExecutorDouble
from webapp.runs import real, runner
from webapp.runs.models import Run
from webapp.runs.tasks import execute_real, execute_run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def queued(monkeypatch) -> list[str]:
    """A test double for the task runner: records what would be queued, runs nothing."""
    calls: list[str] = []
    monkeypatch.setattr("webapp.runs.runner.enqueue", lambda run_id: calls.append(str(run_id)))
    monkeypatch.setattr("webapp.runs.runner.enqueue_real", lambda run_id: calls.append(f"real:{run_id}"))
    return calls


@pytest.fixture
def finished_run(make_run) -> Run:
    run = make_run(settings={"k": 2, "turns": 1, "seed": 7})
    assert execute_run(str(run.id)) == Run.FINISHED
    run.refresh_from_db()
    return run


# -- Run for real counts against the limits ------------------------------------------------------------


@override_settings(EXECSIM_MAX_CONCURRENT_RUNS=2)
def test_run_for_real_at_the_limit_is_refused_with_the_limits_message(
    client, alice, make_run, finished_run, queued
):
    make_run(status=Run.RUNNING), make_run(status=Run.QUEUED)
    client.force_login(alice)

    page = client.post(f"/runs/{finished_run.id}/real/", follow=True).content.decode()

    assert "2 run(s) in progress (limit 2)" in page
    assert queued == [] and not real.pending(finished_run.id)


@override_settings(EXECSIM_MAX_CONCURRENT_RUNS=2)
def test_a_run_for_real_asked_for_counts_as_a_run_in_progress(
    client, alice, problem, make_run, finished_run, queued
):
    make_run(status=Run.RUNNING)
    client.force_login(alice)
    client.post(f"/runs/{finished_run.id}/real/")
    assert queued == [f"real:{finished_run.id}"]

    page = client.post(
        f"/problems/{problem.pk}/solve/", {"k": 1, "turns": 0, "temperature": 0.5}, follow=True
    )

    assert "2 run(s) in progress (limit 2)" in page.content.decode()
    assert Run.objects.filter(status__in=Run.ACTIVE).count() == 1


@override_settings(EXECSIM_MAX_CONCURRENT_RUNS=2)
def test_a_run_for_real_asked_for_during_a_run_follows_it_and_adds_nothing(client, alice, make_run, queued):
    running = make_run(status=Run.RUNNING)
    make_run(status=Run.RUNNING)
    client.force_login(alice)

    page = client.post(f"/runs/{running.id}/real/", follow=True).content.decode()

    assert "in progress (limit" not in page
    assert real.pending(running.id) and queued == []  # the run's end starts it


# -- the in-process runner is fair between users ---------------------------------------------------------


@pytest.fixture
def gated_runner(monkeypatch, settings):
    """The in-process runner with task doubles that record each start and wait for the test's gate."""
    settings.TASK_RUNNER = "inprocess"
    gate = threading.Event()
    started: list[str] = []

    def task(prefix: str):
        def run(run_id: str) -> str:
            started.append(prefix + run_id)
            gate.wait(20)
            return "done"

        return run

    monkeypatch.setattr(runner, "execute_run", task(""))
    monkeypatch.setattr(runner, "execute_real", task("real:"))
    for name in ("_pool", "_scheduler"):  # a fresh runner for this test
        if hasattr(getattr(runner, name, None), "cache_clear"):
            getattr(runner, name).cache_clear()
    yield gate, started
    gate.set()
    time.sleep(0.3)  # the doubles return; the workers go idle
    if hasattr(getattr(runner, "_scheduler", None), "cache_clear"):
        runner._scheduler.cache_clear()  # later tests get a runner made with their own settings


def _wait_for(started: list[str], count: int, seconds: float = 3.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while len(started) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return list(started)


@override_settings(INPROCESS_WORKERS=2, EXECSIM_MAX_CONCURRENT_RUNS=2)
def test_a_user_who_filled_their_limit_leaves_a_worker_for_another_users_run(
    gated_runner, make_run, bob, finished_run
):
    gate, started = gated_runner
    a1, a2 = make_run(status=Run.QUEUED), make_run(status=Run.QUEUED)
    for enqueue, run in ((runner.enqueue, a1), (runner.enqueue, a2), (runner.enqueue_real, finished_run)):
        enqueue(run.id)  # alice: two runs and a Run for real
    time.sleep(0.3)
    b = make_run(user=bob, status=Run.QUEUED)

    runner.enqueue(b.id)

    seen = _wait_for(started, 2)
    assert seen == [str(a1.id), str(b.id)], seen  # alice holds one worker, bob's run starts at once


@override_settings(INPROCESS_WORKERS=1, EXECSIM_MAX_CONCURRENT_RUNS=5)
def test_queued_work_is_served_in_turn_between_users(gated_runner, make_run, bob):
    gate, started = gated_runner
    alices = [make_run(status=Run.QUEUED) for _ in range(3)]
    bobs = [make_run(user=bob, status=Run.QUEUED) for _ in range(2)]
    for run in (*alices, *bobs):
        runner.enqueue(run.id)
    time.sleep(0.3)  # alice's first holds the worker; the rest is queued

    gate.set()

    a, b = [str(r.id) for r in alices], [str(r.id) for r in bobs]
    assert _wait_for(started, 5) == [a[0], b[0], a[1], b[1], a[2]]


# -- one user's share of the sandbox -----------------------------------------------------------------------


class CountingExecutor(ExecutorDouble):
    """The executor double, counting the programs it runs at once."""

    def __init__(self) -> None:
        super().__init__()
        self.now = self.most = 0

    async def execute(self, program: Any, *, trace: bool) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(0.02)
            return await super().execute(program, trace=trace)
        finally:
            self.now -= 1


@override_settings(EXECSIM_MAX_PROGRAMS_PER_USER=1)
def test_a_run_for_real_runs_at_most_the_users_share_of_programs_at_once(finished_run):
    executor = CountingExecutor()
    assert real.request(finished_run.id)

    assert execute_real(str(finished_run.id), executor=executor) == "done"

    assert len(executor.executed) >= 6 and executor.most == 1


@override_settings(EXECSIM_MAX_PROGRAMS_PER_USER=1)
def test_a_users_trace_waits_for_their_own_programs_and_not_for_other_users(alice, bob, monkeypatch):
    from webapp import limits

    monkeypatch.setattr(limits, "SANDBOX_SHARE_WAIT_SECONDS", 0.3, raising=False)
    holding, done = threading.Event(), threading.Event()

    def alices_program() -> None:  # one of alice's programs, running in the sandbox
        with limits.sandbox_share(alice.pk):
            holding.set()
            done.wait(5)

    program = threading.Thread(target=alices_program)
    program.start()
    try:
        assert holding.wait(5)
        started = time.monotonic()
        with limits.trace_slot(bob):
            assert time.monotonic() - started < 0.2  # bob's trace starts at once
        with pytest.raises(limits.LimitExceeded, match="programs"), limits.trace_slot(alice):
            pass
    finally:
        done.set()
        program.join(5)
