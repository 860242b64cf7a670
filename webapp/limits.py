"""Limits on what one user may ask of the server, with documented defaults (docs/webapp.md), each
configurable through an environment variable (see settings.py). A limit hit is a clear message, never
a crash and never a half-saved object."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.cache import cache

from simulator.problem import Problem as CoreProblem


class LimitExceeded(Exception):
    """Raised with the message to show the user."""


def check_can_start_run(user: Any) -> None:
    """Concurrent runs per user and runs started per minute (the request rate for expensive requests)."""
    from webapp.runs.models import Run

    active = Run.objects.filter(user=user, status__in=Run.ACTIVE).count()
    if active >= settings.EXECSIM_MAX_CONCURRENT_RUNS:
        raise LimitExceeded(
            f"You already have {active} run(s) in progress (limit {settings.EXECSIM_MAX_CONCURRENT_RUNS}). "
            "Wait for one to finish or cancel it."
        )
    window = int(time.time() // 60)
    key = f"execsim:rate:{user.pk}:{window}"
    cache.add(key, 0, timeout=120)
    try:
        count = cache.incr(key)
    except ValueError:  # evicted between add and incr
        cache.set(key, 1, timeout=120)
        count = 1
    if count > settings.EXECSIM_RUNS_PER_MINUTE:
        raise LimitExceeded(
            f"Too many runs started in the last minute (limit {settings.EXECSIM_RUNS_PER_MINUTE} "
            "per minute). Try again shortly."
        )


def code_errors(code: str, field: str = "code") -> list[tuple[str, str]]:
    if len(code) > settings.EXECSIM_MAX_CODE_CHARS:
        return [(field, f"is {len(code)} characters; the limit is {settings.EXECSIM_MAX_CODE_CHARS}")]
    return []


def problem_errors(problem: CoreProblem) -> list[tuple[str, str]]:
    """Size limits for a problem (statement, number of tests, size of each test), by field."""
    errors = []
    if len(problem.statement) > settings.EXECSIM_MAX_STATEMENT_CHARS:
        limit = settings.EXECSIM_MAX_STATEMENT_CHARS
        errors.append(("statement", f"is {len(problem.statement)} characters; the limit is {limit}"))
    if len(problem.tests) > settings.EXECSIM_MAX_TESTS:
        errors.append(("tests", f"has {len(problem.tests)} tests; the limit is {settings.EXECSIM_MAX_TESTS}"))
    for i, test in enumerate(problem.tests):
        for name in ("input", "output"):
            size = len(getattr(test, name))
            if size > settings.EXECSIM_MAX_TEST_CHARS:
                errors.append(
                    (
                        f"tests[{i}].{name}",
                        f"is {size} characters; the limit is {settings.EXECSIM_MAX_TEST_CHARS}",
                    )
                )
    return errors
