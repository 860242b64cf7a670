"""Where training finds shared inputs: the benchmark folder (for decontamination only, never for data)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def benchmarks_dir() -> Path | None:
    """The shared benchmark folder: ``$EXECSIM_BENCHMARKS_DIR``, else ``<repo>/../shared/benchmarks``
    (where CI keeps its copy), else None."""
    env = os.environ.get("EXECSIM_BENCHMARKS_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared" / "benchmarks")
    for path in candidates:
        if path.is_dir():
            return path.resolve()
    return None


def is_benchmark_path(path: Path) -> bool:
    """True when ``path`` lies inside the benchmark folder: training data must never come from there."""
    bench = benchmarks_dir()
    if bench is None:
        return False
    try:
        Path(path).resolve().relative_to(bench)
    except ValueError:
        return False
    return True
