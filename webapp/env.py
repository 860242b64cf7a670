"""Strict readers for settings from environment variables: a bad value is a configuration error at
start-up (ImproperlyConfigured) naming the variable, never a silent default.

``DATABASE_URL`` is parsed by dj-database-url, the convention (query options such as
``?sslmode=require`` reach the driver). The readers stay hand-written because django-environ, the
convention for them, is not strict; checked with django-environ 0.14.0:

- ``env.bool`` reads any unknown spelling as False (``DEBUG=maybe`` -> False, ``EXECSIM_HTTPS=ture``
  -> plain http in production), and an empty value as False whatever the default;
- ``env.int`` raises a bare ValueError ("invalid literal for int() with base 10: 'ten'") that names
  no variable, fails on an empty value instead of using the default, and knows no minimum;
- ``env.list`` keeps the spaces (``"/srv/a, /srv/b"`` -> ``["/srv/a", " /srv/b"]``).

Wrapping it to fix all four would leave as much code here as these readers, plus a dependency.
(healthchecks, the style anchor, hand-writes ``envbool``/``envint`` for the same reason.)
"""

from __future__ import annotations

import os
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_ENGINES = ("django.db.backends.postgresql", "django.db.backends.sqlite3")


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r}: expected one of true/false, 1/0, yes/no, on/off")


def envint(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r}: expected an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value}: must be at least {minimum}")
    return value


def envfloat(name: str, default: float, *, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r}: expected a number") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value}: must be at least {minimum}")
    return value


def envlist(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def database_from_url(url: str, pool: int = 0) -> dict[str, Any]:
    """``postgres://user:password@host:port/name?option=value`` (or ``sqlite:///path``) -> a DATABASES
    entry. PostgreSQL and SQLite only: psycopg is the one driver the project installs. The errors
    never quote the URL (it may hold a password).

    ``pool`` > 0 (``EXECSIM_DB_POOL``, off by default; PostgreSQL): each process holds at most that
    many connections, in psycopg's pool, lent per request or task and given back (a thread that finds
    none free waits up to 30 s). Without it every thread of a process keeps a connection of its own
    for 60 s, and a burst of users across a few processes passes PostgreSQL's max_connections
    (bench/load.py: "too many clients", pages answered 503). Off by default: with the pool, a database
    that is down is retried by the pool's threads and a request waits its timeout (30 s) before the
    outage page or the command's message, where without it the connection is refused at once."""
    try:
        db = dj_database_url.parse(url, conn_max_age=0 if pool else 60, conn_health_checks=not pool)
    except ValueError as exc:  # an unknown scheme, a port that is not a number, ...
        raise ImproperlyConfigured(f"DATABASE_URL: {exc}") from None
    if db["ENGINE"] not in _ENGINES:
        scheme = url.partition(":")[0]
        raise ImproperlyConfigured(f"DATABASE_URL scheme {scheme!r} is not supported (postgres, sqlite)")
    if not db["NAME"]:
        raise ImproperlyConfigured("DATABASE_URL names no database")
    if pool and db["ENGINE"] == "django.db.backends.postgresql":
        db.setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": pool, "timeout": 30}
    return dict(db)
