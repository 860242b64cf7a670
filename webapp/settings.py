"""Django settings, chosen by environment variables (docs/deploy.md lists them all).

Two modes, never by editing this file:
- embedded (no DATABASE_URL): SQLite in the data directory, an in-memory channel layer, an in-process
  task runner; the SECRET_KEY is generated once and stored in the data directory.
- production (DATABASE_URL set): PostgreSQL, Redis (REDIS_URL) for Channels, Celery and the cache;
  SECRET_KEY must come from the environment.
"""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from simulator import config
from webapp.env import database_from_url, envbool, envfloat, envint, envlist

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = config.data_dir()

DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")
PRODUCTION = bool(DATABASE_URL)


def _secret_key() -> str:
    key = os.environ.get("SECRET_KEY") or os.environ.get("DJANGO_SECRET_KEY")
    if key:
        return key
    if PRODUCTION:
        raise ImproperlyConfigured("SECRET_KEY must be set when DATABASE_URL is (production mode)")
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = envbool("DEBUG", False)
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "axes",
    "webapp.apps.WebappConfig",
    "webapp.accounts",
    "webapp.problems",
    "webapp.runs",
    "webapp.explorer",
    "webapp.exercises",
    "webapp.annotation",
    "webapp.checkpoints",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # A service that is down or a limit hit: its page (503/429) instead of a 500 (webapp/errors.py).
    "webapp.errors.ErrorPagesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Content-Security-Policy on every response (webapp/security.py).
    "webapp.security.ContentSecurityPolicyMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page (429).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "webapp.urls"
ASGI_APPLICATION = "webapp.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": False,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

if DATABASE_URL:
    # EXECSIM_DB_POOL=N: each process borrows from a pool of at most N connections (default 0: a
    # connection per thread, kept 60 s): webapp.env.database_from_url, docs/deploy.md "Several machines".
    DATABASES = {"default": database_from_url(DATABASE_URL, pool=envint("EXECSIM_DB_POOL", 0, minimum=0))}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "execsim.sqlite3",
            # The in-process runner writes from several threads. IMMEDIATE transactions take the write
            # lock up front, so a writer waits (timeout) instead of failing with "database is locked"
            # when it upgrades a read lock; WAL lets pages read while a run records its events.
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

if REDIS_URL:
    CHANNEL_LAYERS = {
        # capacity: as in embedded mode, a viewer that falls behind loses no event (see consumers.py).
        # socket_timeout: redis-py's default (5 s) equals channels_redis's blocking pop (brpop_timeout,
        # 5 s), so every idle receive timed out and closed the run page's socket (1011); a host dict's
        # keys go to redis-py's ConnectionPool.from_url. A longer timeout still notices a dead Redis.
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30, "socket_connect_timeout": 5}],
                "capacity": 5000,
            },
        }
    }
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    # The default capacity (100 messages a channel) drops events for a viewer that falls behind; the
    # consumer refills gaps from the database, and a larger buffer makes gaps rare.
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 5000}}
    }
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery (production): the broker is Redis; without REDIS_URL runs go to the in-process task runner.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("EXECSIM_CELERY_QUEUE", "execsim")
CELERY_TASK_ACKS_LATE = False  # a run whose worker died is marked failed and retried by the user
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
TASK_RUNNER = "celery" if REDIS_URL else "inprocess"
INPROCESS_WORKERS = envint("EXECSIM_INPROCESS_WORKERS", 3, minimum=1)  # 2 a user, one left for another

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Failed logins (django-axes): after AXES_FAILURE_LIMIT failures for one username from one address, that
# pair is locked out for the cool-off time; a success resets the count. The database handler keeps the
# attempts in its own tables (shared by every process; no cache-backend caveats in embedded mode).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_FAILURE_LIMIT = envint("EXECSIM_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=envint("EXECSIM_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "accounts/locked_out.html"
AXES_CLIENT_IP_CALLABLE = "webapp.limits.client_ip"
AXES_VERBOSE = False
AXES_DISABLE_ACCESS_LOG = True  # only failures are kept, not a log of every successful login
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "problems:list"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", DATA_DIR / "staticfiles"))
# Serve /static/ from the ASGI app (embedded mode; production puts a web server or CDN in front).
SERVE_STATIC = envbool("EXECSIM_SERVE_STATIC", not PRODUCTION)

# Security: on by default in production (behind HTTPS), off in embedded mode (plain http on localhost).
HTTPS = envbool("EXECSIM_HTTPS", PRODUCTION)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS and envbool("EXECSIM_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = envint("EXECSIM_HSTS_SECONDS", 31_536_000 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
EXECSIM_BEHIND_PROXY = envbool("EXECSIM_BEHIND_PROXY", False)
if EXECSIM_BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Limits (docs/webapp.md): every one is env-configurable and has a test.
EXECSIM_MAX_CONCURRENT_RUNS = envint("EXECSIM_MAX_CONCURRENT_RUNS", 2, minimum=1)
EXECSIM_RUNS_PER_MINUTE = envint("EXECSIM_RUNS_PER_MINUTE", 10, minimum=1)
EXECSIM_SIGNUPS_PER_HOUR = envint("EXECSIM_SIGNUPS_PER_HOUR", 5, minimum=1)
EXECSIM_EXERCISE_JOINS_PER_MINUTE = envint("EXECSIM_EXERCISE_JOINS_PER_MINUTE", 300, minimum=1)
EXECSIM_EXPLORER_MAX_CONCURRENT = envint("EXECSIM_EXPLORER_MAX_CONCURRENT", 2, minimum=1)
# open run-page WebSockets per account and per client address (share-link readers, several accounts
# behind one address): one account opening 100 sockets made other users' handshakes fail (issue 51,
# item 10). A person watches a few runs at once; an address may be a classroom behind one NAT.
EXECSIM_MAX_SOCKETS_PER_USER = envint("EXECSIM_MAX_SOCKETS_PER_USER", 20, minimum=1)
EXECSIM_MAX_SOCKETS_PER_ADDRESS = envint("EXECSIM_MAX_SOCKETS_PER_ADDRESS", 60, minimum=1)
# one user's programs running at once in a server process's sandbox pool (runs, Run for real, explorer
# traces): all the pool's workers (one per CPU) but one, so another user's program always finds one
# (issue 51, item 9).
EXECSIM_MAX_PROGRAMS_PER_USER = envint(
    "EXECSIM_MAX_PROGRAMS_PER_USER", max(1, (os.cpu_count() or 1) - 1), minimum=1
)
EXECSIM_MAX_CODE_CHARS = envint("EXECSIM_MAX_CODE_CHARS", 20_000, minimum=1)
EXECSIM_MAX_STATEMENT_CHARS = envint("EXECSIM_MAX_STATEMENT_CHARS", 20_000, minimum=1)
EXECSIM_MAX_TEST_CHARS = envint("EXECSIM_MAX_TEST_CHARS", 250_000, minimum=1)
EXECSIM_MAX_TESTS = envint("EXECSIM_MAX_TESTS", 50, minimum=1)
EXECSIM_MAX_K = envint("EXECSIM_MAX_K", 16, minimum=1)
EXECSIM_MAX_TURNS = envint("EXECSIM_MAX_TURNS", 5, minimum=0)
EXECSIM_MAX_UPLOAD_BYTES = envint("EXECSIM_MAX_UPLOAD_BYTES", 5_000_000, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = EXECSIM_MAX_UPLOAD_BYTES + 100_000
FILE_UPLOAD_MAX_MEMORY_SIZE = EXECSIM_MAX_UPLOAD_BYTES + 100_000
# a gzipped import file, once unpacked (webapp/problems/importers.py)
EXECSIM_MAX_IMPORT_BYTES = envint("EXECSIM_MAX_IMPORT_BYTES", 50_000_000, minimum=1)
# records in one import (a benchmark file: CRUXEval's 800, MBPP's 974), and problems one user owns
# (imported or written): one 5 MB upload made 10,000 public problems in 15 s (issue 51, item 11)
EXECSIM_MAX_IMPORT_RECORDS = envint("EXECSIM_MAX_IMPORT_RECORDS", 1000, minimum=1)
EXECSIM_MAX_PROBLEMS_PER_USER = envint("EXECSIM_MAX_PROBLEMS_PER_USER", 5000, minimum=1)

# The trace explorer and the annotation queue (docs/explorer.md, docs/annotation.md): the step cap of a
# trace recorded for the explorer or the queue, how long an annotator holds a claimed item, and how many
# annotators review an item (a queue's own policy, set by staff, overrides the last two).
EXECSIM_EXPLORER_MAX_STEPS = envint("EXECSIM_EXPLORER_MAX_STEPS", 2000, minimum=1)
EXECSIM_ANNOTATION_CLAIM_SECONDS = envint("EXECSIM_ANNOTATION_CLAIM_SECONDS", 600, minimum=1)
EXECSIM_ANNOTATIONS_PER_ITEM = envint("EXECSIM_ANNOTATIONS_PER_ITEM", 1, minimum=1)
# Where the Checkpoints pages look (docs/webapp.md): folders, each a checkpoint (it holds manifest.json)
# or a parent of checkpoint folders; by default the committed ones and the data directory's.
EXECSIM_CHECKPOINT_DIRS = envlist(
    "EXECSIM_CHECKPOINT_DIRS", [str(BASE_DIR / "checkpoints"), str(DATA_DIR / "checkpoints")]
)

# Reliability: a running task touches Run.heartbeat_at this often; a run whose heartbeat is older than
# EXECSIM_STALE_RUN_SECONDS is marked failed (checked when runs are read and by `manage.py reap_runs`).
EXECSIM_HEARTBEAT_SECONDS = envfloat("EXECSIM_HEARTBEAT_SECONDS", 5.0, minimum=0.1)
EXECSIM_STALE_RUN_SECONDS = envfloat("EXECSIM_STALE_RUN_SECONDS", 60.0, minimum=1.0)
EXECSIM_CANCEL_GRACE_SECONDS = envfloat("EXECSIM_CANCEL_GRACE_SECONDS", 5.0, minimum=0.0)
# The pipeline the task runs: the real one by default; tests point it at a scripted double.
EXECSIM_PIPELINE = os.environ.get("EXECSIM_PIPELINE", "simulator.pipeline.run")
EXECSIM_SIMULATE_PIPELINE = os.environ.get("EXECSIM_SIMULATE_PIPELINE", "simulator.pipeline.simulate_program")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"daphne": {"level": "WARNING"}, "django.channels.server": {"level": "WARNING"}},
}
