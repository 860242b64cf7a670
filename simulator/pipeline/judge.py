"""A program's verdict over all tests, as a judge says it (LeetCode, Codeforces): "Accepted 4/4 (3
public, 1 private)", "Wrong answer on test 2: expected 0, got None", "Runtime error on test 1:
TypeError: ... (line 3)", "Time limit exceeded on test 3". The first failing test in the problem's
order decides; a test the reader may not see is named without its input, expected or actual output.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from simulator.nlex.verify import shorten

# Statuses (simulator.execution.result) -> what a judge calls them.
_NAMES = {
    "wrong_answer": "Wrong answer",
    "runtime_error": "Runtime error",
    "syntax_error": "Compilation error",
    "timeout": "Time limit exceeded",
    "memory_limit": "Memory limit exceeded",
    "output_limit": "Output limit exceeded",
    "killed": "Killed",
    "invalid_input": "Not run",
}


@dataclass(frozen=True)
class Outcome:
    """One test's real run: its index among all the problem's tests and how it ended."""

    test: int
    public: bool
    status: str
    passed: bool
    output: str = ""
    expected: str | None = None
    message: str = ""


@dataclass(frozen=True)
class Judgement:
    verdict: str  # "accepted", or the failing test's status ("wrong_answer" when it ran but differs)
    headline: str
    test: int | None = None  # the first failing test
    passed: int = 0
    total: int = 0

    @property
    def short(self) -> str:
        """The verdict and the count, naming no test: "Accepted 4/4", "Wrong answer 3/4" (a list's cell)."""
        if self.verdict == "none":
            return self.headline
        name = "Accepted" if self.verdict == "accepted" else _NAMES.get(self.verdict, self.verdict)
        return f"{name} {self.passed}/{self.total}"


def judge(
    outcomes: Sequence[Outcome],
    hidden: Collection[int] = (),
    name: Callable[[int], str] = lambda i: f"test {i + 1}",
) -> Judgement:
    """The verdict over ``outcomes``; the tests in ``hidden`` are named but never shown."""
    ordered = sorted(outcomes, key=lambda o: o.test)
    passed = sum(o.passed for o in ordered)
    if ordered and passed == len(ordered):
        public = sum(o.public for o in ordered)
        split = f" ({public} public, {len(ordered) - public} private)" if public < len(ordered) else ""
        return Judgement("accepted", f"Accepted {passed}/{len(ordered)}{split}", None, passed, len(ordered))
    if not ordered:
        return Judgement("none", "Not run on any test")
    first = next(o for o in ordered if not o.passed)
    verdict = "wrong_answer" if first.status == "ok" else first.status
    where = f"{_NAMES.get(verdict, verdict)} on {name(first.test)}"
    if first.test in hidden:
        detail = " (a private test)"
    elif verdict == "wrong_answer":
        detail = f": expected {_short(first.expected)}, got {_short(first.output)}"
    else:
        detail = f": {_short(first.message, 120)}" if first.message else ""
    return Judgement(
        verdict, f"{where}{detail} ({passed}/{len(ordered)} passed)", first.test, passed, len(ordered)
    )


def _short(text: str | None, limit: int = 60) -> str:
    if text is None:
        return "nothing"
    return shorten(text, limit) or repr(text)  # an empty or blank output is shown as its repr
