"""Sandboxed execution of programs, with an optional line trace: the ground truth for simulations.

    from simulator.execution import run, run_many, Program
    result = run(Program(code="def f(x):\\n    return x * 2", call="f(21)"), trace=True)
    result.status, result.value, result.trace.steps

``run`` and ``run_many`` use one lazily created, process-wide ``Pool`` (closed at exit); make your own
``Pool`` for other limits or worker counts. A pool that cannot start raises ``SandboxError``.

The names below are loaded on first use (PEP 562 ``__getattr__``) because the sandbox worker imports this
package too: it must not load the pool (threading, subprocess, concurrent.futures, logging). Every module
in the worker makes each forked child dearer, and ``threading``'s after-fork hook alone cost each program
~130 copy-on-write page faults.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from simulator.execution.trace import DEFAULT_MAX_STEPS, Trace

if TYPE_CHECKING:
    from simulator.execution.pool import Pool, Progress, RunPrograms, default_pool
    from simulator.execution.program import Program
    from simulator.execution.result import STATUSES, ExecutionResult
    from simulator.execution.sandbox import Limits, SandboxError

__all__ = [
    "DEFAULT_MAX_STEPS",
    "STATUSES",
    "ExecutionResult",
    "Limits",
    "Pool",
    "Program",
    "RunPrograms",
    "SandboxError",
    "Trace",
    "default_pool",
    "run",
    "run_many",
]

_LAZY = {
    "Pool": "pool",
    "Progress": "pool",
    "RunPrograms": "pool",
    "default_pool": "pool",
    "Program": "program",
    "STATUSES": "result",
    "ExecutionResult": "result",
    "Limits": "sandbox",
    "SandboxError": "sandbox",
}


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` on first use (see the module docstring for why)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def run(program: Program, *, trace: bool = False, max_steps: int = DEFAULT_MAX_STEPS) -> ExecutionResult:
    """Run one program in the sandbox (traced when asked)."""
    from simulator.execution.pool import default_pool

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
    from simulator.execution.pool import Pool, default_pool

    pool = default_pool()
    if workers is not None and workers != pool.workers:
        with Pool(workers=workers) as own:
            return own.run_many(programs, trace=trace, max_steps=max_steps, progress=progress)
    return pool.run_many(programs, trace=trace, max_steps=max_steps, progress=progress)
