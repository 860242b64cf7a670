"""The one seam through which training runs programs: the sandbox's ``run_many``.

Training never executes generated code in its own process; every program goes through
``simulator.execution.run_many`` (sandboxed, rlimited, no network). Functions that run programs take an
``executor`` of its shape (``simulator.execution.RunPrograms``) so unit tests can pass a test double.

Under ``accelerate launch`` every rank computes the rewards of its own completions, each in a sandbox
pool of its own: ``rank_run_many`` starts that pool with the rank's share of the node's cores
(``training.distributed.sandbox_workers``), where the default pool would start ``cpu_count`` workers in
every rank.
"""

from __future__ import annotations

from simulator.execution import RunPrograms, run_many
from simulator.execution.pool import default_pool
from simulator.execution.program import Program
from simulator.execution.result import ExecutionResult
from training.distributed import local_world_size, sandbox_workers


def run_programs(programs: list[Program]) -> list[ExecutionResult]:
    """Run each program in the sandbox, results in order."""
    return run_many(programs) if programs else []


def trace_programs(programs: list[Program]) -> list[ExecutionResult]:
    """Run each program in the sandbox with the line tracer on (``result.trace`` is a Trace)."""
    return run_many(programs, trace=True) if programs else []


def rank_run_many(programs: list[Program]) -> list[ExecutionResult]:
    """Run each program in this rank's sandbox pool, the process's default pool started with
    ``sandbox_workers()`` workers, results in order. A module-level function, so a reward holding it
    pickles."""
    return default_pool(sandbox_workers()).run_many(programs) if programs else []


def reward_executor() -> RunPrograms | None:
    """The executor a reward runs programs with: None (the default pool, ``cpu_count`` workers) for a
    single process, ``rank_run_many`` when several ranks share this machine's cores."""
    return rank_run_many if local_world_size() > 1 else None
