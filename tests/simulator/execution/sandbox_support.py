"""Shared by the sandbox tests: small limits, the two ways a pool starts, benchmark file locations.

Every sandbox test runs twice: ``root`` (the pool as the host runs it here, as root: a privileged bwrap
prepares the view, then drops to uid 65534) and ``unprivileged`` (the worker started through ``setpriv`` as
uid 65534 with nothing privileged at all, as a normal user's pool would run). The second needs root to
switch users and an interpreter that uid can run; without those it is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from simulator.execution import Limits, Pool, Program, SandboxError
from simulator.execution.sandbox import NOBODY

SMALL = Limits(
    memory_mb=256, file_size_mb=8, tmp_size_mb=32, shm_size_mb=16, processes=8, open_files=64, output_kb=256
)
SHARED = Path(__file__).resolve().parents[3].parent / "shared"
BENCHMARKS = SHARED / "benchmarks"
VARIANTS = ["root", "unprivileged"]


def python_for(uid: int) -> str | None:
    """An interpreter (3.11+) that ``uid`` can run, preferring this one."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    for candidate in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if not candidate:
            continue
        candidate = os.path.realpath(candidate)  # the file actually executed must be reachable
        probe = "import os, sys; assert sys.version_info >= (3, 11); os.stat(sys.argv[1])"
        check = [
            setpriv,
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            candidate,
            "-c",
            probe,
            candidate,
        ]
        try:
            if subprocess.run(check, cwd="/", capture_output=True, timeout=20).returncode == 0:
                return candidate
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


def make_pool(variant: str, limits: Limits = SMALL, workers: int = 2) -> Pool:
    """A started pool for one variant (skips the test when the variant cannot run here)."""
    if variant == "root":
        return Pool(workers=workers, limits=limits).start()
    if os.geteuid() != 0:
        pytest.skip(
            "the unprivileged variant switches to uid 65534, which needs root (this host is the user)"
        )
    python = python_for(NOBODY)
    if python is None:
        pytest.skip("no Python 3.11+ interpreter is runnable by uid 65534 on this host")
    try:
        return Pool(
            workers=workers, limits=limits, run_as_uid=NOBODY, setup_as_root=False, python=python
        ).start()
    except SandboxError as exc:
        pytest.skip(f"uid 65534 cannot start a worker here (project not readable by it?): {exc}")


def benchmark_file(*parts: str) -> Path:
    path = BENCHMARKS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"benchmark file {path} is absent (shared/ is expected next to the repository)")
    return path


def run_from_threads(pool: Pool, programs: list[Program], *, trace: bool = False, timeout_s: float = 60.0):
    """``pool.run`` of each program from a thread of its own, all at once (more callers than workers, as
    the pipeline's real executions are); results in order. Fails, rather than hangs, when a caller is
    still waiting for a worker after ``timeout_s``."""
    results: list[Any] = [None] * len(programs)

    def one(index: int) -> None:
        results[index] = pool.run(programs[index], trace=trace)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(programs))]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout_s
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = sum(thread.is_alive() for thread in threads)
    assert not stuck, f"{stuck} of {len(programs)} callers still wait for a worker after {timeout_s} s"
    return results


@contextmanager
def data_dir_under_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """EXECSIM_DATA_DIR in a fresh folder under /tmp (as the web app's browser tests and any site whose
    data directory lies in /tmp have it): the sandbox masks it with a tmpfs, so its /tmp holds folders
    and a mount point of bwrap's own (for pools made inside the block)."""
    folder = Path(tempfile.mkdtemp(prefix="execsim-site-", dir="/tmp"))
    folder.chmod(0o755)
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(folder / "data"))
    try:
        yield folder / "data"
    finally:
        shutil.rmtree(folder)
