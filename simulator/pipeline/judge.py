"""A program's verdict over all tests, as a judge says it (LeetCode, Codeforces): "Accepted 4/4 (3
public, 1 private)", "Wrong answer on test 2: expected 0, got None", "Runtime error on test 1:
TypeError: ... (line 3)", "Time limit exceeded on test 3". The first failing test in the problem's
order decides. A test the reader may not see (``hidden``: another user's private test) shows its
verdict only, as judges show hidden tests: "Failed on test 3 (a private test)", without its input,
expected or actual output, and without how it failed (a time limit, an error) or what it cost: a
program that times itself on its input would otherwise read the input back through them.
Beside it, what the program cost, as a judge reports it (Codeforces: the slowest test and the peak
memory): ``Judgement.cost``, over the tests the reader may see. A public test run with the line tracer
(to check a simulation against it) is slower than the program: the slowest untraced test is reported
when there is one, else the traced time, marked.
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
# A hidden test's verdict when it failed: how it failed is not shown.
HIDDEN_FAILURE = "failed"
_NAMES[HIDDEN_FAILURE] = "Failed"


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
    seconds: float | None = None  # None: not run (the sandbox refused it), or run before this was kept
    memory_kb: int | None = None
    traced: bool = False


@dataclass(frozen=True)
class Judgement:
    # "accepted", or the failing test's status ("wrong_answer" when it ran but differs; "failed" when
    # the reader may not see that test)
    verdict: str
    headline: str
    test: int | None = None  # the first failing test
    passed: int = 0
    total: int = 0
    cost: str = ""  # "slowest test 12 ms · peak memory 9.8 MB"; empty when no test's cost is known

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
    """The verdict over ``outcomes``; the tests in ``hidden`` are named, with whether they passed,
    but nothing more is shown of them (nor counted in the cost)."""
    ordered = sorted(outcomes, key=lambda o: o.test)
    passed = sum(o.passed for o in ordered)
    spent = _cost([o for o in ordered if o.test not in hidden])
    if ordered and passed == len(ordered):
        public = sum(o.public for o in ordered)
        split = f" ({public} public, {len(ordered) - public} private)" if public < len(ordered) else ""
        headline = f"Accepted {passed}/{len(ordered)}{split}"
        return Judgement("accepted", headline, None, passed, len(ordered), spent)
    if not ordered:
        return Judgement("none", "Not run on any test")
    first = next(o for o in ordered if not o.passed)
    if first.test in hidden:
        verdict, detail = HIDDEN_FAILURE, " (a private test)"
    elif first.status in ("ok", "wrong_answer"):
        verdict, detail = "wrong_answer", f": expected {_short(first.expected)}, got {_short(first.output)}"
    else:
        verdict, detail = first.status, f": {_short(first.message, 120)}" if first.message else ""
    where = f"{_NAMES.get(verdict, verdict)} on {name(first.test)}"
    headline = f"{where}{detail} ({passed}/{len(ordered)} passed)"
    return Judgement(verdict, headline, first.test, passed, len(ordered), spent)


def cost(seconds: float | None, memory_kb: int | None, traced: bool = False) -> str:
    """One run's cost as a judge shows it: "12 ms · 9.8 MB", "1.25 s (traced)", "" when unknown."""
    return " · ".join(part for part in (_time(seconds, traced), _memory(memory_kb)) if part)


def _time(seconds: float | None, traced: bool = False) -> str:
    if seconds is None:
        return ""
    shown = f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"
    return shown + (" (traced)" if traced else "")


def _memory(memory_kb: int | None) -> str:
    return f"{memory_kb / 1024:.1f} MB" if memory_kb is not None else ""


def _cost(outcomes: Sequence[Outcome]) -> str:
    """The slowest test (of the untraced ones when there are any: the tracer slows a program down)
    and the peak memory over ``outcomes``: "slowest test 12 ms · peak memory 9.8 MB"."""
    timed = [o for o in outcomes if o.seconds is not None]
    slowest = max([o for o in timed if not o.traced] or timed, key=lambda o: o.seconds or 0.0, default=None)
    memory = max((o.memory_kb for o in outcomes if o.memory_kb is not None), default=None)
    parts = []
    if slowest is not None:
        parts.append(f"slowest test {_time(slowest.seconds, slowest.traced)}")
    if memory is not None:
        parts.append(f"peak memory {_memory(memory)}")
    return " · ".join(parts)


def _short(text: str | None, limit: int = 60) -> str:
    if text is None:
        return "nothing"
    return shorten(text, limit) or repr(text)  # an empty or blank output is shown as its repr
