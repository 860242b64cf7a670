"""One test per limit (docs/webapp.md): each is hit with a clear message and nothing half-saved."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from tests.webapp.posts import problem_post
from webapp.problems.models import Problem
from webapp.runs.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_rate_counters():
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


@override_settings(EXECSIM_MAX_CONCURRENT_RUNS=2)
def test_concurrent_runs_per_user(client, alice, problem, make_run, no_enqueue):
    make_run(status=Run.RUNNING)
    make_run(status=Run.QUEUED)
    client.force_login(alice)
    page = _solve(client, problem).content.decode()
    assert "2 run(s) in progress (limit 2)" in page
    assert Run.objects.count() == 2


@override_settings(EXECSIM_RUNS_PER_MINUTE=2, EXECSIM_MAX_CONCURRENT_RUNS=100)
def test_runs_started_per_minute(client, alice, problem, no_enqueue):
    client.force_login(alice)
    _solve(client, problem)
    _solve(client, problem)
    page = _solve(client, problem).content.decode()
    assert "Too many runs started in the last minute (limit 2 per minute)" in page
    assert Run.objects.count() == 2


@override_settings(EXECSIM_MAX_K=4)
def test_candidates_per_run(client, alice, problem, no_enqueue):
    client.force_login(alice)
    page = _solve(client, problem, k=5).content.decode()
    assert "Not started" in page and "less than or equal to 4" in page
    assert not Run.objects.exists()


@override_settings(EXECSIM_MAX_TURNS=1)
def test_repair_turns_per_run(client, alice, problem, no_enqueue):
    client.force_login(alice)
    assert "less than or equal to 1" in _solve(client, problem, turns=2).content.decode()


@override_settings(EXECSIM_MAX_CODE_CHARS=50)
def test_code_size_for_simulate_my_code(client, alice, no_enqueue):
    client.force_login(alice)
    response = client.post("/simulate/", {"code": "x = 1\n" * 20, "mode": "stdin", "code_input": ""})
    assert "is 120 characters; the limit is 50" in response.content.decode()
    assert not Run.objects.exists()


@override_settings(EXECSIM_MAX_STATEMENT_CHARS=10)
def test_statement_size(client, alice):
    client.force_login(alice)
    data = {"title": "T", "statement": "a long statement", "tests": [{"input": "", "output": ""}]}
    response = client.post(
        "/problems/import/",
        {"file": SimpleUploadedFile("p.json", json.dumps(data).encode()), "format": "execsim"},
    )
    assert response.context["errors"] == ["problem: statement: is 16 characters; the limit is 10"]
    assert not Problem.objects.exists()


@override_settings(EXECSIM_MAX_TESTS=2)
def test_number_of_tests(client, alice):
    client.force_login(alice)
    data = {"title": "T", "statement": "s", "tests": [{"input": str(i), "output": ""} for i in range(3)]}
    response = client.post(
        "/problems/import/",
        {"file": SimpleUploadedFile("p.json", json.dumps(data).encode()), "format": "execsim"},
    )
    assert response.context["errors"] == ["problem: tests: has 3 tests; the limit is 2"]


@override_settings(EXECSIM_MAX_TEST_CHARS=5)
def test_size_of_a_test_in_the_editor(client, alice):
    client.force_login(alice)
    data = problem_post([("123456", "1", True)], title="T", statement="s", kind="stdin", entry_point="")
    response = client.post("/problems/new/", data)
    assert response.context["formset"].forms[0].errors["input"] == ["is 6 characters; the limit is 5"]
    assert not Problem.objects.exists()


@override_settings(EXECSIM_MAX_UPLOAD_BYTES=100)
def test_upload_size(client, alice):
    client.force_login(alice)
    response = client.post(
        "/problems/import/", {"file": SimpleUploadedFile("p.json", b" " * 101), "format": "execsim"}
    )
    assert "The file is 101 bytes; the limit is 100." in response.content.decode()
