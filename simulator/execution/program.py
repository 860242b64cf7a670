"""What to run: one program in one of three shapes.

- call:  ``code`` defines functions; ``call`` is an expression such as ``f(1, 2)`` whose value is the result
  (CRUXEval, HumanEval-style entry points).
- tests: ``code`` is followed by assert statements (MBPP); the result is ok when every assert holds.
- stdin: ``code`` is a script that reads ``stdin`` and writes stdout (competitive programming).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from simulator.source import parse_python

Shape = Literal["call", "tests", "stdin"]

DEFAULT_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Program:
    code: str
    call: str | None = None
    tests: tuple[str, ...] | None = None
    stdin: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    # The expected stdout for stdin programs; when given, a mismatch is a wrong_answer.
    expected_stdout: str | None = field(default=None, compare=False)

    @property
    def shape(self) -> Shape:
        if self.call is not None:
            return "call"
        if self.tests is not None:
            return "tests"
        return "stdin"

    def problems(self) -> list[str]:
        """Reasons this program cannot be run at all (empty when it can). Syntax errors in ``code`` are
        not listed here: running it reports them as a ``syntax_error`` result."""
        given = [name for name in ("call", "tests", "stdin") if getattr(self, name) is not None]
        errors = []
        if len(given) > 1:
            errors.append(f"give exactly one of call, tests, stdin (got {', '.join(given)})")
        if self.call is not None:
            errors.extend(call_errors(self.call))
        if self.tests is not None and not all(isinstance(t, str) for t in self.tests):
            errors.append("tests must be a list of assert statements (strings)")
        if not (0 < self.timeout_s <= 60):
            errors.append("timeout_s must be in (0, 60]")
        return errors


def call_errors(call: str) -> list[str]:
    """Why ``call`` cannot be run as a call (empty when it can); a blank one is most often a script
    given the call shape, so the message names the other one."""
    if not call.strip():
        return [
            "call mode needs an expression such as f(3, 'ab'); choose stdin for a program that reads its "
            "input or only prints"
        ]
    try:
        parse_python(call, mode="eval")
    except SyntaxError as exc:
        return [f"call is not a Python expression: {exc.msg}"]
    return []


def call_from_input(entry: str, argument_source: str) -> str:
    """The call expression for a CRUXEval-style item: ``entry(<input>)``."""
    return f"{entry}({argument_source})"
