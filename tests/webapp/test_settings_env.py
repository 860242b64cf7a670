"""Settings come from the environment: strict helpers, and the two modes' SECRET_KEY rules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from webapp.env import database_from_url, envbool, envint

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("raw", "value"), [("true", True), ("0", False), ("Yes", True), ("off", False), ("", True)]
)
def test_envbool_reads_the_usual_spellings(monkeypatch, raw, value):
    monkeypatch.setenv("X_FLAG", raw)
    assert envbool("X_FLAG", True) is value


def test_envbool_refuses_anything_else(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG='maybe'"):
        envbool("X_FLAG", False)


def test_envint_refuses_non_integers_and_values_below_the_minimum(monkeypatch):
    monkeypatch.setenv("X_NUM", "ten")
    with pytest.raises(ImproperlyConfigured, match="expected an integer"):
        envint("X_NUM", 1)
    monkeypatch.setenv("X_NUM", "0")
    with pytest.raises(ImproperlyConfigured, match="at least 1"):
        envint("X_NUM", 1, minimum=1)


def test_database_url_is_parsed():
    db = database_from_url("postgres://u:p%40ss@db.example:6543/execsim?sslmode=require")
    assert (db["ENGINE"], db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "django.db.backends.postgresql", "execsim", "u", "p@ss", "db.example", 6543,
    )  # fmt: skip
    assert db["OPTIONS"] == {"sslmode": "require"}  # options reach psycopg
    assert (db["CONN_MAX_AGE"], db["CONN_HEALTH_CHECKS"]) == (60, True)
    assert database_from_url("sqlite:////tmp/x.sqlite3")["NAME"] == "/tmp/x.sqlite3"


def test_a_pool_caps_a_processs_connections():
    db = database_from_url("postgres://u:p@db.example/execsim?sslmode=require", pool=8)
    assert db["OPTIONS"] == {"sslmode": "require", "pool": {"min_size": 1, "max_size": 8, "timeout": 30}}
    assert db["CONN_MAX_AGE"] == 0  # Django's pool lends a connection per request; none is kept
    assert "pool" not in database_from_url("sqlite:////tmp/x.sqlite3", pool=8).get("OPTIONS", {})


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("mysql://u:secret@x/y", "scheme 'mysql' is not supported"),
        ("oracle2://u:secret@x/y", "is unknown"),
        ("postgres://u:secret@db.example/", "names no database"),
        ("postgres://u:secret@db.example:port/execsim", "not a valid url"),
    ],
)
def test_a_bad_database_url_is_refused_without_quoting_its_password(url, why):
    with pytest.raises(ImproperlyConfigured, match=why) as refused:
        database_from_url(url)
    assert str(refused.value).startswith("DATABASE_URL") and "secret" not in str(refused.value)


MODES = "print(s.SECRET_KEY[:6], s.TASK_RUNNER, s.DATABASES['default']['ENGINE'])"


def _settings_in_subprocess(env: dict[str, str], show: str = MODES) -> subprocess.CompletedProcess:
    """Import webapp.settings in a fresh interpreter with ``env`` (no database, Redis or key of the
    test run's own) and run ``show`` on it as ``s``."""
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY")}
    code = f"import webapp.settings as s; {show}"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_embedded_mode_generates_and_keeps_a_secret_key(tmp_path):
    first = _settings_in_subprocess({"EXECSIM_DATA_DIR": str(tmp_path)})
    second = _settings_in_subprocess({"EXECSIM_DATA_DIR": str(tmp_path)})
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout and "inprocess django.db.backends.sqlite3" in first.stdout
    assert oct((tmp_path / "secret_key").stat().st_mode & 0o777) == "0o600"


def test_production_mode_requires_a_secret_key(tmp_path):
    result = _settings_in_subprocess({"EXECSIM_DATA_DIR": str(tmp_path), "DATABASE_URL": "postgres://u@h/db"})
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_the_explorer_annotation_and_checkpoint_settings_come_from_the_environment(tmp_path):
    env = {
        "EXECSIM_DATA_DIR": str(tmp_path),
        "EXECSIM_CHECKPOINT_DIRS": "/srv/a, /srv/b",
        "EXECSIM_ANNOTATIONS_PER_ITEM": "3",
    }
    show = "print(s.EXECSIM_CHECKPOINT_DIRS, s.EXECSIM_ANNOTATIONS_PER_ITEM, s.EXECSIM_EXPLORER_MAX_STEPS)"
    read = _settings_in_subprocess(env, show)
    assert read.returncode == 0, read.stderr
    assert read.stdout.strip() == "['/srv/a', '/srv/b'] 3 2000"
    bad = _settings_in_subprocess({**env, "EXECSIM_ANNOTATION_CLAIM_SECONDS": "ten"}, show)
    assert bad.returncode != 0 and "EXECSIM_ANNOTATION_CLAIM_SECONDS='ten': expected an integer" in bad.stderr


EMBEDDED_WRITERS = """
import threading, django
from django.db import connection, transaction
django.setup()
with connection.cursor() as c:
    c.execute("CREATE TABLE counter (n INTEGER)")
    c.execute("INSERT INTO counter VALUES (0)")
connection.close()
errors = []
def writer():
    try:
        for _ in range(40):
            with transaction.atomic(), connection.cursor() as c:  # read, then write: a lock upgrade
                c.execute("SELECT n FROM counter")
                n = c.fetchone()[0]
                c.execute("UPDATE counter SET n = %s", [n + 1])
    except Exception as exc:
        errors.append(repr(exc))
    finally:
        connection.close()
threads = [threading.Thread(target=writer) for _ in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
with connection.cursor() as c:
    c.execute("SELECT n FROM counter")
    print(c.fetchone()[0], errors[:1])
"""


def test_embedded_mode_lets_runner_threads_write_at_once(tmp_path):
    """Several in-process runs record events at the same time: on SQLite none may fail with
    "database is locked", and no update is lost."""
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY")}
    env = {**clean, "EXECSIM_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "webapp.settings"}
    done = subprocess.run(
        [sys.executable, "-c", EMBEDDED_WRITERS],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "160", done.stdout
