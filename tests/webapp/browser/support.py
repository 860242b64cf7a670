"""Live servers for the browser tests, started as the deployment docs start them, and Chromium.

- ``production_stack``: ``daphne webapp.asgi:application`` plus a real ``celery -A webapp worker``, both
  subprocesses on the test database (PostgreSQL) and Redis, with the real pipeline and model client
  pointed at a given OpenAI-compatible URL (the fake model server or the real vLLM one).
- ``embedded_server``: ``execsim up --port N`` (SQLite, in-process runner, in-memory channel layer) in a
  temporary EXECSIM_DATA_DIR, none of the test session's database settings inherited.
- ``add_one_script``: a FakeModelServer responder (a test double of the model) for an "Add one" problem.
- ``launch_chromium``: headless Debian Chromium through Playwright (every browser test uses it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from simulator.llm.testing import PipelineScript

REPO = Path(__file__).resolve().parents[3]
CHROMIUM = Path("/usr/bin/chromium")
# Screenshots go to a temporary folder; EXECSIM_SCREENSHOTS=docs/screenshots refreshes the ones in docs/.
SCREENSHOTS = Path(
    os.environ.get("EXECSIM_SCREENSHOTS") or Path(tempfile.gettempdir()) / "execsim-screenshots"
)
SCREENSHOTS.mkdir(parents=True, exist_ok=True)


@contextmanager
def launch_chromium() -> Iterator[Any]:
    """Headless Debian Chromium through Playwright; the test is skipped, with the reason, when either is
    missing."""
    import pytest

    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need Chromium at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


# Variables the test session sets for itself (webapp.test_settings, tests/webapp/conftest.py) that a
# server started for a browser test must not inherit blindly.
SESSION_ONLY = (
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "REDIS_URL",
    "SECRET_KEY",
    "EXECSIM_HTTPS",
    "EXECSIM_PIPELINE",
    "EXECSIM_SIMULATE_PIPELINE",
    "EXECSIM_MODEL_URL",
    "EXECSIM_MODEL_NAME",
    "EXECSIM_DATA_DIR",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
)

ADD_ONE = {
    "title": "Add one",
    "statement": "Return `x + 1` for an integer `x`.",
    "entry_point": "add_one",
    "tests": [("1", "2", True), ("5", "6", True), ("-1", "0", False)],
}
# Quick heartbeats and cancels, and limits no test session reaches: every test runs and signs up from
# 127.0.0.1, and the sign-up throttle's counters (Redis, or the embedded server's memory) last an hour.
TEST_LIMITS = {
    "EXECSIM_HEARTBEAT_SECONDS": "1",
    "EXECSIM_CANCEL_GRACE_SECONDS": "2",
    "EXECSIM_RUNS_PER_MINUTE": "100",
    "EXECSIM_MAX_CONCURRENT_RUNS": "10",
    "EXECSIM_SIGNUPS_PER_HOUR": "10000",
}
RIGHT = "```python\ndef add_one(x):\n    return x + 1\n```"
WRONG = "```python\ndef add_one(x):\n    return x + 2\n```"
# A comment to start a scripted program with (``add_one_script(preamble=...)``): with the fake server's
# delay_s, streaming then takes a while.
SLOW_PREAMBLE = "Let me think about this step by step before writing the program. " * 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SESSION_ONLY}
    env.update(extra)
    return env


def _start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    handle = log.open("wb")
    try:
        return subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
        )
    finally:
        handle.close()


def stop(proc: subprocess.Popen, grace_s: float = 8.0) -> None:
    """SIGTERM to the process group, SIGKILL after ``grace_s``; never leaves it running."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def _tail(log: Path, chars: int = 3000) -> str:
    try:
        return log.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout_s: float = 90.0) -> None:
    """Until ``url`` answers (any status below 500); fail with the server's log if it died."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{proc.args[:4]} exited with {proc.returncode}:\n{_tail(log)}")
        try:
            if httpx.get(url, timeout=2.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} did not answer within {timeout_s} s:\n{_tail(log)}")


@contextmanager
def production_stack(
    db: dict[str, Any], model_url: str, model_name: str, workdir: Path, **extra_env: str
) -> Iterator[str]:
    """daphne + a Celery worker on the test database; yields the site's base URL (no trailing /)."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    from django.conf import settings

    env = clean_env(
        # The production settings (not webapp.test_settings, whose per-process cache would hide what
        # the web process and the worker must share), on the test database and the tests' Redis.
        DJANGO_SETTINGS_MODULE="webapp.settings",
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        REDIS_URL=settings.REDIS_URL,
        SECRET_KEY=settings.SECRET_KEY,  # the test's force_login sessions must verify in daphne
        EXECSIM_HTTPS="false",  # plain http on 127.0.0.1
        EXECSIM_SERVE_STATIC="true",  # no web server in front of daphne here
        EXECSIM_PIPELINE="simulator.pipeline.run",
        EXECSIM_SIMULATE_PIPELINE="simulator.pipeline.simulate_program",
        EXECSIM_MODEL_URL=model_url,
        EXECSIM_MODEL_NAME=model_name,
        EXECSIM_DATA_DIR=str(workdir / "data"),
        **TEST_LIMITS,
        **extra_env,
    )
    queue = os.environ["EXECSIM_CELERY_QUEUE"]
    worker_cmd = [sys.executable, "-m", "celery", "-A", "webapp", "worker", "--pool=solo"]
    worker_cmd += [
        "--without-heartbeat",
        "--without-gossip",
        "--without-mingle",
        "-Q",
        queue,
        "-l",
        "warning",
    ]
    web_log, worker_log = workdir / "daphne.log", workdir / "worker.log"
    web = _start(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "webapp.asgi:application"],
        env,
        web_log,
    )
    worker = _start(worker_cmd, env, worker_log)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/problems/", web, web_log)
        yield base
    finally:
        stop(web)
        stop(worker)
        if os.environ.get("EXECSIM_BROWSER_LOGS"):
            print(f"--- daphne ---\n{_tail(web_log)}\n--- worker ---\n{_tail(worker_log)}")


@contextmanager
def embedded_server(data_dir: Path, model_url: str, model_name: str, **extra_env: str) -> Iterator[str]:
    """``execsim up --port N`` (the README's main command) in a fresh data directory; ``extra_env``
    (e.g. TEST_LIMITS) is added to its environment."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = clean_env(
        EXECSIM_DATA_DIR=str(data_dir),
        EXECSIM_MODEL_URL=model_url,
        EXECSIM_MODEL_NAME=model_name,
        **extra_env,
    )
    env.pop("EXECSIM_CELERY_QUEUE", None)
    log = data_dir / "up.log"
    execsim = Path(sys.executable).with_name("execsim")
    proc = _start([str(execsim), "up", "--port", str(port)], env, log)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/problems/", proc, log, timeout_s=120)
        yield base
    finally:
        stop(proc, grace_s=15)
        if os.environ.get("EXECSIM_BROWSER_LOGS"):
            print(f"--- execsim up ---\n{_tail(log)}")


def add_one_value(code: str, call: str) -> Any:
    """What ``call`` returns for a trusted scripted program (the fake model 'simulates' it)."""
    namespace: dict[str, Any] = {}
    exec(compile(code, "<scripted>", "exec"), namespace)
    return eval(call, namespace)


def nlex(call: str, value: Any, thought: str = "") -> str:
    thought = thought or f"{call.split('(')[0]} is called; it returns {value!r}."
    return f"[THOUGHT] {thought} [/THOUGHT]\n[ANSWER] assert {call} == {value!r} [/ANSWER]"


def add_one_script(
    solve: list[str] | None = None,
    simulate: Callable[[str, str], str] | None = None,
    preamble: str = "",
    repair: Sequence[str] = ("No change.",),
) -> PipelineScript:
    """k=2 replies [right, wrong] by default (each starting with ``preamble`` as a comment in the code,
    to make streaming take a while with a delayed server: the solve request prefills the code fence and
    stops at the closing one, so the model writes nothing outside its program); simulations are
    faithful unless ``simulate`` says otherwise; ``repair``: the replies of successive repair turns."""
    comment = f"# {preamble}\n" if preamble else ""
    replies = [text.replace("```python\n", "```python\n" + comment, 1) for text in (solve or [RIGHT, WRONG])]

    def faithful(code: str, call: str) -> str:
        return nlex(call, add_one_value(code, call))

    return PipelineScript(solve=replies, simulate=simulate or faithful, repair=repair)
