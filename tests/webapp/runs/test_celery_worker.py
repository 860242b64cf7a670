"""Runs executed by a real Celery worker (`celery -A webapp worker`, a subprocess on the test database
and Redis): a run goes from queued to finished; a worker SIGKILLed mid-run leaves the run failed (by
the stale-heartbeat check) and retryable, never stuck "running"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from webapp.runs import runner
from webapp.runs.models import Run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def start_worker():
    """Start `celery -A webapp worker` on the test database; stopped (or found killed) at teardown."""
    procs: list[subprocess.Popen] = []

    def start(**extra_env: str) -> subprocess.Popen:
        db = connection.settings_dict
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "webapp.test_settings",
            "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
            "EXECSIM_HEARTBEAT_SECONDS": "0.5",
            **extra_env,
        }
        cmd = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "webapp",
            "worker",
            "--pool=solo",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "-Q",
            os.environ["EXECSIM_CELERY_QUEUE"],
            "-l",
            "warning",
        ]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_a_worker_runs_a_run_to_the_end(start_worker, make_run):
    start_worker()
    run = make_run(settings={"k": 2, "turns": 1, "real": True})
    runner.enqueue(run.id)

    _wait_for(lambda: Run.objects.get(id=run.id).status == Run.FINISHED, 60, "the run to finish")
    run.refresh_from_db()
    seqs = list(run.events.values_list("seq", flat=True))
    assert seqs == list(range(len(seqs))) and run.events.last().type == "run_finished"
    assert run.candidates.count() == 2 and run.executions.count() == 3


@override_settings(EXECSIM_STALE_RUN_SECONDS=2)
def test_a_worker_killed_mid_run_leaves_the_run_failed_and_retryable(start_worker, make_run, client, alice):
    worker = start_worker(EXECSIM_DOUBLE_DELAY="0.3")
    run = make_run(settings={"k": 4, "turns": 1})
    runner.enqueue(run.id)
    _wait_for(lambda: Run.objects.get(id=run.id).events.count() >= 3, 60, "the run to be under way")

    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=10)
    killed_at = timezone.now()
    run.refresh_from_db()
    assert run.status == Run.RUNNING  # nobody has noticed yet

    time.sleep(2.6)  # > EXECSIM_STALE_RUN_SECONDS after the last heartbeat
    call_command("reap_runs")  # what the reaper process runs every 30 s
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()

    run.refresh_from_db()
    assert run.status == Run.FAILED and "stopped responding" in run.error
    assert run.finished_at >= killed_at
    last = run.events.last()
    assert last.type == "run_failed" and last.payload["error"] == "worker_lost" and last.seq == run.last_seq
    assert 'data-testid="retry-run"' in page
