"""Smoke tests of the maintained benchmarks in bench/: each script, run as its docstring says, on tiny
input, must exit 0 and print its figures (the rows of its table, not particular numbers)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _clean_env() -> dict[str, str]:
    """This shell's environment without what the test session set for itself (the web app tests'
    settings module, EXECSIM_* doubles): a benchmark is run as a user runs it."""
    session = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL")
    return {k: v for k, v in os.environ.items() if not k.startswith("EXECSIM_") and k not in session}


@pytest.fixture
def run_bench() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``bench/<name>.py ARGS`` from the repository root with this interpreter; fail with its output
    when it does not exit 0."""

    def run(name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, str(REPO / "bench" / f"{name}.py"), *args],
            cwd=REPO,
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    return run
