"""Project-wide rules: the imports follow the layering rule (import-linter's contracts in
pyproject.toml), the code passes ruff, and the core passes mypy ([tool.mypy] in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = ("django", "channels", "celery", "webapp", "training")


def _tool(name: str) -> str:
    """The path of a console script of the dev extra (the virtualenv's first), or a failed test."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def test_the_imports_keep_the_contracts() -> None:
    """``lint-imports`` checks pyproject.toml's [tool.importlinter] contracts (docs/architecture.md, "The
    layering rule"): the core never imports a framework, the web app or training; each floor of the core
    imports only the floors below it; the web app has no import cycle. It reads every import statement,
    those inside functions too."""
    done = subprocess.run(
        [_tool("lint-imports"), "--no-cache"], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_the_code_passes_ruff() -> None:
    done = subprocess.run(
        [_tool("ruff"), "check", "--quiet", str(REPO)], capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_core_passes_mypy() -> None:
    """``mypy`` checks the files of pyproject.toml's [tool.mypy] (the core, simulator/) under its rules:
    strict, with the optional heavy dependencies read as Any. Its cache (.mypy_cache/) keeps reruns quick."""
    done = subprocess.run([_tool("mypy")], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_importing_the_core_loads_no_framework_at_run_time() -> None:
    """The contracts above (and ruff's TID251 in pyproject.toml) read only the core's own source, not the
    imports made by the external packages it imports: load every simulator module in a fresh interpreter
    and look at sys.modules."""
    script = (
        "import importlib, pkgutil, sys, simulator\n"
        "for m in pkgutil.walk_packages(simulator.__path__, 'simulator.'):\n"
        "    if not m.name.endswith('__main__'):\n"
        "        importlib.import_module(m.name)\n"
        f"print(sorted({{n.split('.')[0] for n in sys.modules}} & set({FORBIDDEN_IN_CORE!r})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
