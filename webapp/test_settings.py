"""Settings for the test suite: PostgreSQL and Redis on localhost unless the environment says otherwise."""

from __future__ import annotations

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/execsim")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
os.environ.setdefault("SECRET_KEY", "test-only-" + "x" * 50)
os.environ.setdefault("EXECSIM_HTTPS", "false")

from webapp.settings import *  # noqa: E402,F403

# Several test sessions may run at once on one machine: give each its own test database and cache.
DATABASES["default"]["TEST"] = {"NAME": f"test_execsim_{os.getpid()}"}  # noqa: F405
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Close connections after each use: worker threads and database_sync_to_async must not keep the test
# database open (its teardown would fail).
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
# The test process's own connections are pytest-django's (it renames the database to the test one), never
# a pool's (EXECSIM_DB_POOL set in the shell applies to the servers the browser tests start only).
DATABASES["default"].get("OPTIONS", {}).pop("pool", None)  # noqa: F405
