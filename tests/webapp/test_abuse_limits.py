"""Abuse limits (issue 11 item 10), each hit with a clear answer: a seed past a 64-bit integer, the
runs-per-minute limit as a sliding window, the explorer's per-user concurrent traces, failed logins
(django-axes) and sign-ups per address."""

from __future__ import annotations

import threading
import time

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

from webapp.explorer.models import Trace
from webapp.runs.models import Run


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def no_enqueue(monkeypatch):
    """A test double for the task runner."""
    monkeypatch.setattr("webapp.runs.runner.enqueue", lambda run_id: None)


def _solve(client, problem, **fields):
    data = {"k": 1, "turns": 0, "temperature": 0.5, **fields}
    return client.post(f"/problems/{problem.pk}/solve/", data, follow=True)


@pytest.mark.django_db
def test_it_refuses_a_seed_past_a_64_bit_integer_on_the_form(client, alice, problem, no_enqueue):
    client.force_login(alice)
    response = _solve(client, problem, seed=2**63)
    assert response.status_code == 200
    assert "less than or equal to 9223372036854775807" in response.content.decode()
    assert not Run.objects.exists()
    _solve(client, problem, seed=2**63 - 1)
    assert Run.objects.get().seed == 2**63 - 1


@pytest.mark.django_db
@override_settings(EXECSIM_RUNS_PER_MINUTE=2, EXECSIM_MAX_CONCURRENT_RUNS=100)
def test_runs_per_minute_is_a_sliding_window_not_a_calendar_minute(
    client, alice, problem, no_enqueue, monkeypatch
):
    """Two runs at hh:mm:50, a third at hh:(mm+1):10 is refused (only 20 s later), a fourth 61 s after
    the first goes through. The clock is shifted, not stopped, so the cache's expiry stays consistent."""
    real = time.time
    start = (real() // 60 + 1) * 60 + 50  # second 50 of a coming minute
    offset = [start - real()]
    monkeypatch.setattr(time, "time", lambda: real() + offset[0])
    client.force_login(alice)
    _solve(client, problem)
    _solve(client, problem)
    offset[0] += 20
    page = _solve(client, problem).content.decode()
    assert "Too many runs started in the last minute (limit 2 per minute)" in page
    assert Run.objects.count() == 2
    offset[0] += 41
    _solve(client, problem)
    assert Run.objects.count() == 3


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@override_settings(EXECSIM_EXPLORER_MAX_CONCURRENT=1)
def test_the_explorer_caps_a_users_concurrent_traces_and_not_other_users(alice, bob, sandbox):
    busy, mine, other = Client(), Client(), Client()
    busy.force_login(alice)
    mine.force_login(alice)
    other.force_login(bob)
    loop = {"code": "while True:\n    pass\n", "mode": "stdin", "call_input": ""}
    held = threading.Thread(target=busy.post, args=("/explorer/", loop))
    held.start()
    try:
        time.sleep(1.0)  # the infinite loop holds alice's one slot until the sandbox's wall clock ends it
        quick = {"code": "print(1)\n", "mode": "stdin", "call_input": ""}
        refused = mine.post("/explorer/", quick)
        assert refused.status_code == 429
        assert "1 trace(s) running (limit 1)" in refused.content.decode()
        assert other.post("/explorer/", quick).status_code == 302  # bob is not held up by alice's cap
    finally:
        held.join(timeout=60)
    assert mine.post("/explorer/", quick).status_code == 302  # the slot is free again
    assert Trace.objects.filter(owner=alice).count() == 2


@pytest.mark.django_db
@override_settings(AXES_FAILURE_LIMIT=5)
def test_logins_lock_out_after_repeated_wrong_passwords(client, alice):
    wrong = [client.post("/accounts/login/", {"username": "alice", "password": "wrong"}) for _ in range(5)]
    assert [r.status_code for r in wrong] == [200, 200, 200, 200, 429]  # the fifth failure locks
    locked = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice-123"})
    assert locked.status_code == 429
    assert "Too many failed log-in attempts" in locked.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
@override_settings(EXECSIM_SIGNUPS_PER_HOUR=2)
def test_sign_ups_are_throttled_per_address(client):
    def signup(name: str, address: str):
        data = {"username": name, "password1": "a-long-pass-417", "password2": "a-long-pass-417"}
        return Client(REMOTE_ADDR=address).post("/accounts/signup/", {**data, "role": "developer"})

    assert signup("u1", "10.0.0.1").status_code == 302
    assert signup("u2", "10.0.0.1").status_code == 302
    refused = signup("u3", "10.0.0.1")
    assert refused.status_code == 429
    assert "Too many sign-ups from your address (limit 2 per hour)" in refused.content.decode()
    assert signup("u4", "10.0.0.2").status_code == 302
