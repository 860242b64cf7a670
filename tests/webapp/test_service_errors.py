"""A dead dependency or a bad setting gets a clear answer (issue 11 item 7): pages answer 503 naming
the service that is down, commands print one line naming it and exit 1 (2 for a configuration error).
"Down" is a real PostgreSQL or Redis client pointed at a closed port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import caches
from django.test import override_settings

REPO = Path(__file__).resolve().parents[2]
EXECSIM = Path(sys.executable).with_name("execsim")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


def _redis_down() -> dict:
    url = f"redis://127.0.0.1:{_closed_port()}/0"
    return {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}


@pytest.fixture
def no_enqueue(monkeypatch):
    """A test double for the task runner."""
    monkeypatch.setattr("webapp.runs.runner.enqueue", lambda run_id: None)


@pytest.mark.django_db
def test_the_status_fragment_says_redis_is_down(client):
    with override_settings(CACHES=_redis_down()):
        response = client.get("/status/model/")
        caches["default"].close()
    assert response.status_code == 503
    page = response.content.decode()
    assert "Redis is not reachable" in page and "Server Error" not in page


@pytest.mark.django_db
def test_solve_says_redis_is_down(client, alice, problem, no_enqueue):
    client.force_login(alice)
    with override_settings(CACHES=_redis_down()):
        response = client.post(f"/problems/{problem.pk}/solve/", {"k": 1, "turns": 0, "temperature": 0.5})
    assert response.status_code == 503
    assert "Redis is not reachable" in response.content.decode()


def _production_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE",)}
    env.update(
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/execsim",
        REDIS_URL="redis://127.0.0.1:6379/15",
        SECRET_KEY="test-only-" + "x" * 50,
        EXECSIM_HTTPS="false",
        DJANGO_SETTINGS_MODULE="webapp.settings",
    )
    env.update(extra)
    return env


PAGE_WITH_DATABASE_DOWN = """
import django
django.setup()
from django.test import Client
response = Client(raise_request_exception=False, HTTP_HOST="127.0.0.1").get("/problems/")
print(response.status_code)
print(response.content.decode())
"""


def test_a_page_says_the_database_is_down():
    env = _production_env(DATABASE_URL=f"postgres://postgres@127.0.0.1:{_closed_port()}/execsim")
    done = subprocess.run(
        [sys.executable, "-c", PAGE_WITH_DATABASE_DOWN],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    status, page = done.stdout.split("\n", 1)
    assert status == "503"
    assert "The database is not reachable" in page


def _command(argv: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, cwd=REPO, env=_production_env(**env), capture_output=True, text=True, timeout=60
    )


def _one_line(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, done.stdout + done.stderr
    assert "Traceback" not in lines[0]
    return lines[0]


@pytest.mark.parametrize("command", [["migrate"], ["reap_runs"]])
def test_manage_py_names_the_database_when_it_is_down(command):
    done = _command(
        [sys.executable, "manage.py", *command], DATABASE_URL=f"postgres://u@127.0.0.1:{_closed_port()}/x"
    )
    assert done.returncode == 1
    assert "the database is not reachable" in _one_line(done)


@pytest.mark.parametrize(
    ("env", "named"),
    [({"DATABASE_URL": "not-a-url"}, "DATABASE_URL"), ({"EXECSIM_MAX_K": "ten"}, "EXECSIM_MAX_K='ten'")],
)
def test_manage_py_names_a_bad_setting_and_exits_2(env, named):
    done = _command([sys.executable, "manage.py", "migrate"], **env)
    assert done.returncode == 2
    line = _one_line(done)
    assert line.startswith("configuration error:") and named in line


def test_execsim_up_names_a_bad_setting_and_exits_2(tmp_path):
    done = _command([str(EXECSIM), "up", "--no-model"], EXECSIM_DATA_DIR=str(tmp_path), EXECSIM_MAX_K="ten")
    assert done.returncode == 2
    assert "EXECSIM_MAX_K='ten'" in _one_line(done)


def test_execsim_up_names_the_database_when_it_is_down(tmp_path):
    done = _command(
        [str(EXECSIM), "up", "--no-model"],
        EXECSIM_DATA_DIR=str(tmp_path),
        DATABASE_URL=f"postgres://u@127.0.0.1:{_closed_port()}/x",
    )
    assert done.returncode == 1
    assert "the database is not reachable" in _one_line(done)
