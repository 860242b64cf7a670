"""The problem editor's reference solution: before a save, it runs on every test of the problem as the
judge runs a program (``simulator.pipeline.executor.program_for``, ``real_output``, ``matches``), in the
sandbox, within its owner's share of it (``webapp.limits.sandbox_share``: the places their runs, Run for
real and explorer traces share). A problem whose reference fails a test is not saved, as Polygon
validates a problem's tests against its main solution.

The check runs in the request: the tests run one after the other, each with the sandbox's time limit,
and the tests left when ``BUDGET_SECONDS`` have passed (after the first test) are not run: they count as
failed, so nothing is saved unchecked.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from simulator.pipeline.executor import program_for, real_output
from simulator.pipeline.judge import Judgement, Outcome, judge
from simulator.pipeline.matching import matches
from simulator.problem import Problem as CoreProblem
from webapp.limits import LimitExceeded, sandbox_share

BUDGET_SECONDS = 10.0  # the longest a save waits for the reference, over all its tests
SHARE_WAIT_SECONDS = 5.0  # how long it waits for the user's other programs to leave a place


@dataclass(frozen=True)
class ReferenceCheck:
    """What the reference did: the judge's verdict over every test, and each failed test's own line
    (by its index among the problem's tests); ``error``: why it could not run at all."""

    judgement: Judgement | None = None
    failed: dict[int, str] | None = None
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.error and self.judgement is not None and self.judgement.verdict == "accepted"

    def summary(self) -> str:
        """One paragraph for the top of the form: what failed, and that nothing was saved."""
        if self.error:
            return f"The reference solution could not be run: {self.error} Nothing was saved."
        assert self.judgement is not None and self.failed is not None
        tests = ", ".join(str(i + 1) for i in sorted(self.failed))
        plural = "s" if len(self.failed) > 1 else ""
        return (
            f"The reference solution fails test{plural} {tests}: {self.judgement.headline}. Nothing was "
            "saved: fix the test or the reference (or clear the reference to save without the check)."
        )


def _outcome(problem: CoreProblem, code: str, index: int) -> Outcome:
    from simulator.execution import run

    test = problem.tests[index]
    result = run(program_for(problem, code, test))
    output = real_output(problem.kind, result)
    passed = result.status == "ok" and matches(problem.kind, test.output, output, problem.float_tolerance)
    return Outcome(index, test.public, result.status, passed, output, test.output, result.message)


def check_reference(problem: CoreProblem, code: str, user_pk: Any) -> ReferenceCheck:
    """Run ``code`` on every test of ``problem`` for the user ``user_pk`` (see the module's docstring)."""
    from simulator.execution import SandboxError

    outcomes: list[Outcome] = []
    started = time.monotonic()
    try:
        with sandbox_share(user_pk, wait=SHARE_WAIT_SECONDS):
            for index, test in enumerate(problem.tests):
                if index and time.monotonic() - started > BUDGET_SECONDS:
                    message = f"not run: the reference took over {BUDGET_SECONDS:.0f} s on the tests before"
                    outcomes.append(Outcome(index, test.public, "timeout", False, "", test.output, message))
                    continue
                outcomes.append(_outcome(problem, code, index))
    except LimitExceeded as exc:
        return ReferenceCheck(error=str(exc))
    except SandboxError as exc:
        return ReferenceCheck(error=f"the sandbox is not available ({exc}).")
    failed = {
        o.test: "The reference solution: "
        + judge([o], name=lambda _: "this test").headline.removesuffix(" (0/1 passed)")
        for o in outcomes
        if not o.passed
    }
    return ReferenceCheck(judge(outcomes), failed)
