"""Project-wide rules: the core's imports point one way, and the code passes ruff."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = ("django", "channels", "celery", "webapp", "training")


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_simulator_never_imports_the_web_app_training_or_django() -> None:
    offenders = [
        f"{path.relative_to(REPO)}: {name}"
        for path in sorted((REPO / "simulator").rglob("*.py"))
        for name in imported_modules(path)
        if name.split(".")[0] in FORBIDDEN_IN_CORE
    ]
    assert offenders == []


# The core's floors, bottom up (docs/architecture.md, "The layering rule"): a module imports only
# modules of its own package and of the floors below.
CORE_FLOORS = (
    ("source", "config"),
    ("compare", "problem"),
    ("execution", "prompts"),
    ("nlex", "questions", "llm"),
    ("rewards", "explore", "annotations", "agreement", "benchmarks"),
    ("pipeline",),
    ("evaluation",),
    ("cli",),
)


def test_each_floor_of_the_core_imports_only_the_floors_below() -> None:
    level = {name: i for i, floor in enumerate(CORE_FLOORS) for name in floor}
    upward = []
    for path in sorted((REPO / "simulator").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        if len(parts) < 2 or parts[1] == "__init__" or parts[1] == "__main__":
            continue
        here = parts[1]
        assert here in level, f"{here} is on no floor: add it to CORE_FLOORS and docs/architecture.md"
        for name in imported_modules(path):
            there = name.split(".")
            inside = there[0] == "simulator" and len(there) > 1 and there[1] in level
            if inside and there[1] != here and level[there[1]] >= level[here]:
                upward.append(f"{path.relative_to(REPO)} imports {name}")
    assert upward == []


def test_the_code_passes_ruff() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed: pip install -e '.[dev]'")
    done = subprocess.run([ruff, "check", "--quiet", str(REPO)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr


def test_importing_the_core_loads_no_framework_at_run_time() -> None:
    """The static rule above (and ruff's TID251 in pyproject.toml) cannot see imports made by what the
    core imports: load every simulator module in a fresh interpreter and look at sys.modules."""
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
