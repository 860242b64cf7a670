"""Web app tests: Django with PostgreSQL and Redis (webapp.test_settings), personas, and helpers.

Skipped, with the reason, when PostgreSQL (127.0.0.1:5432) or Redis (127.0.0.1:6379) is not reachable.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
if str(REPO) not in sys.path:  # the scripted double is imported by dotted path (also by a worker)
    sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.test_settings")
os.environ.setdefault("EXECSIM_PIPELINE", "tests.webapp.doubles.scripted_pipeline")
os.environ.setdefault("EXECSIM_SIMULATE_PIPELINE", "tests.webapp.doubles.scripted_simulation")
os.environ.setdefault("EXECSIM_CELERY_QUEUE", f"execsim-test-{os.getpid()}")  # one queue per session


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


SERVICES_MISSING = [
    name for name, port in (("PostgreSQL", 5432), ("Redis", 6379)) if not _reachable("127.0.0.1", port)
]

import django  # noqa: E402

django.setup()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not SERVICES_MISSING:
        return
    skip = pytest.mark.skip(reason=f"web app tests need {' and '.join(SERVICES_MISSING)} on 127.0.0.1")
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(skip)


@pytest.fixture
def alice(django_user_model: Any) -> Any:
    """A developer who owns problems and runs."""
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user("alice", password="pw-alice-123")
    user.groups.add(Group.objects.get_or_create(name="developer")[0])
    return user


@pytest.fixture
def bob(django_user_model: Any) -> Any:
    """Another developer: an outsider to alice's private things."""
    return django_user_model.objects.create_user("bob", password="pw-bob-123")


@pytest.fixture
def carol(django_user_model: Any) -> Any:
    """Staff (the 'staff' group): sees everything."""
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user("carol", password="pw-carol-123")
    user.groups.add(Group.objects.get_or_create(name="staff")[0])
    return user


@pytest.fixture
def problem(alice: Any) -> Any:
    """A public call problem with two public tests and one private test."""
    from simulator.problem import Problem as CoreProblem
    from webapp.problems.models import Problem

    core = CoreProblem.from_dict(
        {
            "title": "Add one",
            "statement": "Return `x + 1`.",
            "kind": "call",
            "entry_point": "add_one",
            "tests": [
                {"input": "1", "output": "2"},
                {"input": "5", "output": "6"},
                {"input": "-1", "output": "0", "public": False},
            ],
        }
    )
    return Problem.create_from_core(core, alice, source="manual", is_public=True)


@pytest.fixture
def make_run(alice: Any, problem: Any) -> Any:
    from webapp.runs.models import Run

    def make(**fields: Any) -> Run:
        defaults = {"problem": problem, "user": alice, "settings": {"k": 2, "turns": 1, "seed": 7}}
        defaults.update(fields)
        return Run.objects.create(**defaults)

    return make


@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> Iterator[None]:
    """Each test gets its own channel layer. Channels keeps one per process, and a Redis layer's
    receive lock, taken on one test's event loop by a consumer still receiving as that loop closed,
    failed a later test's receive ("Lock ... is bound to a different event loop") now and then."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture(scope="session", autouse=True)
def _close_stray_connections(django_db_setup: Any, django_db_blocker: Any) -> Any:
    """Before the test database is dropped, end sessions other threads left open on it (threads of
    asgiref and of the task keep their own connections), so its teardown does not fail."""
    yield
    from django.db import connection

    if not connection.settings_dict["NAME"].startswith("test_"):  # no test of the session used the database
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def sandbox() -> None:
    """Skip, with the reason, where the sandbox cannot start (tests that run programs for real)."""
    from simulator.execution import Program, SandboxError, run

    try:
        run(Program(code="x = 1", stdin=""))
    except SandboxError as exc:
        pytest.skip(f"the sandbox is not available: {exc}")


@pytest.fixture
def no_enqueue(monkeypatch: pytest.MonkeyPatch) -> list:
    """A test double for the task runner: records the runs (and real executions) it would queue."""
    queued: list = []
    monkeypatch.setattr("webapp.runs.runner.enqueue", queued.append)
    monkeypatch.setattr("webapp.runs.runner.enqueue_real", queued.append)
    return queued
