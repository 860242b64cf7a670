"""Sandboxed execution of programs, with an optional line trace: the ground truth for simulations.

    from simulator.execution import run, run_many, Program
    result = run(Program(code="def f(x):\\n    return x * 2", call="f(21)"), trace=True)
    result.status, result.value, result.trace.steps

``run`` and ``run_many`` use one lazily created, process-wide ``Pool`` (closed at exit); make your own
``Pool`` for other limits or worker counts. A pool that cannot start raises ``SandboxError``.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterable

from simulator.execution.pool import Pool, Progress
from simulator.execution.program import Program
from simulator.execution.result import STATUSES, ExecutionResult
from simulator.execution.sandbox import Limits, SandboxError
from simulator.execution.trace import DEFAULT_MAX_STEPS, Trace

__all__ = [
    "DEFAULT_MAX_STEPS",
    "STATUSES",
    "ExecutionResult",
    "Limits",
    "Pool",
    "Program",
    "SandboxError",
    "Trace",
    "default_pool",
    "run",
    "run_many",
]

_default: Pool | None = None
_default_lock = threading.Lock()


def default_pool() -> Pool:
    """The process-wide pool, started on first use."""
    global _default
    with _default_lock:
        if _default is None:
            pool = Pool().start()
            atexit.register(pool.close)
            _default = pool
        return _default


def run(program: Program, *, trace: bool = False, max_steps: int = DEFAULT_MAX_STEPS) -> ExecutionResult:
    """Run one program in the sandbox (traced when asked)."""
    return default_pool().run(program, trace=trace, max_steps=max_steps)


def run_many(
    programs: Iterable[Program],
    *,
    trace: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
    workers: int | None = None,
    progress: Progress | None = None,
) -> list[ExecutionResult]:
    """Run many programs concurrently; results in input order. ``workers`` other than the default
    pool's size uses a pool of that size for this call."""
    pool = default_pool()
    if workers is not None and workers != pool.workers:
        with Pool(workers=workers) as own:
            return own.run_many(programs, trace=trace, max_steps=max_steps, progress=progress)
    return pool.run_many(programs, trace=trace, max_steps=max_steps, progress=progress)
