"""A programming problem as the pipeline, the CLI and the web app exchange it.

JSON file format (documented in docs/problem-format.md):

    {"title": str, "statement": str (Markdown),
     "kind": "stdin" | "call",
     "entry_point": str (call problems: the function the tests call),
     "tests": [{"input": str, "output": str, "public": bool}],
     "float_tolerance": float (optional; stdout tokens that are floats compare within it)}

For ``stdin`` problems a test's input is fed on stdin and its output is the expected stdout. For
``call`` problems a test's input is the source of the argument list (``entry_point(<input>)``) and its
output is a Python literal of the expected return value.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from simulator.source import explain_syntax_error, parse_python

Kind = Literal["stdin", "call"]
# The largest float_tolerance: judges use 1e-9 to 1e-4; a tolerance past a million accepts any output
# a test could expect, and bounds what the database stores (a 5,000-digit value made the import a 500).
MAX_TOLERANCE = 1_000_000


class ProblemError(ValueError):
    """A malformed problem; ``field`` names the offending field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class TestCase:
    input: str
    output: str
    public: bool = True


@dataclass(frozen=True)
class Problem:
    title: str
    statement: str
    kind: Kind
    tests: tuple[TestCase, ...]
    entry_point: str | None = None
    float_tolerance: float | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def public_tests(self) -> tuple[TestCase, ...]:
        return tuple(t for t in self.tests if t.public)

    @property
    def private_tests(self) -> tuple[TestCase, ...]:
        return tuple(t for t in self.tests if not t.public)

    def starter_code(self) -> str:
        """What a judge's editor opens with for a call problem: the entry point's signature, its
        parameters named as the statement writes the call (``count_vowels(s)``), else ``a, b, ...``
        counted from the first test's arguments; empty for a stdin problem (a script has no
        signature to give)."""
        if self.kind != "call" or not self.entry_point:
            return ""
        count = _argument_count(self.tests[0].input) if self.tests else None
        written = re.search(rf"\b{re.escape(self.entry_point)}\(([^()]*)\)", self.statement)
        names = (
            [n.strip() for n in written.group(1).split(",")] if written and written.group(1).strip() else []
        )
        if not names or not all(n.isidentifier() for n in names) or count not in (None, len(names)):
            names = [chr(ord("a") + i) for i in range(min(count or 0, 26))]
        return f"def {self.entry_point}({', '.join(names)}):\n    pass\n"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tests"] = [asdict(t) for t in self.tests]
        data.pop("extra")
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Problem:
        """Validate and build; raises ProblemError naming the first bad field."""
        problem, errors = cls.validate(data)
        if errors:
            raise errors[0]
        assert problem is not None
        return problem

    @classmethod
    def validate(cls, data: Any) -> tuple[Problem | None, list[ProblemError]]:
        """Validate and build: the problem, or None and every error found, in field order.

        The web form shows them all at once, each at its field; ``from_dict`` raises the first.
        """
        if not isinstance(data, dict):
            return None, [ProblemError("(top level)", "a problem is a JSON object")]
        errors: list[ProblemError] = []
        title = _text(data, "title", errors)
        statement = _text(data, "statement", errors)
        kind = data.get("kind", "stdin")
        if kind not in ("stdin", "call"):
            errors.append(ProblemError("kind", f"must be 'stdin' or 'call', not {kind!r}"))
        entry_point = data.get("entry_point")
        if kind == "call" and not (isinstance(entry_point, str) and entry_point.isidentifier()):
            errors.append(ProblemError("entry_point", "call problems need the name of the function to call"))
        raw_tests = data.get("tests")
        tests = []
        if not isinstance(raw_tests, list) or not raw_tests:
            errors.append(ProblemError("tests", "must be a non-empty list of {input, output, public}"))
            raw_tests = []
        for i, raw in enumerate(raw_tests):
            where = f"tests[{i}]"
            if not isinstance(raw, dict):
                errors.append(ProblemError(where, "must be an object with input and output"))
                continue
            test_in, test_out = raw.get("input"), raw.get("output")
            if not isinstance(test_in, str):
                errors.append(ProblemError(f"{where}.input", "must be a string"))
            elif kind == "call":
                _check_source(f"{where}.input", test_in, "an argument list", errors, call=True)
            if not isinstance(test_out, str):
                errors.append(ProblemError(f"{where}.output", "must be a string"))
            elif kind == "call":
                _check_source(f"{where}.output", test_out, "a Python literal", errors)
            public = raw.get("public", True)
            if not isinstance(public, bool):
                errors.append(ProblemError(f"{where}.public", "must be true or false"))
            elif isinstance(test_in, str) and isinstance(test_out, str):
                tests.append(TestCase(input=test_in, output=test_out, public=public))
        if raw_tests and not any(isinstance(t, dict) and t.get("public", True) is True for t in raw_tests):
            errors.append(ProblemError("tests", "at least one test must be public"))
        tolerance = data.get("float_tolerance")
        if tolerance is not None and not _sane_tolerance(tolerance):
            errors.append(
                ProblemError("float_tolerance", f"must be a finite number from 0 to {MAX_TOLERANCE:,}")
            )
        if errors:
            return None, errors
        problem = cls(
            title=title,
            statement=statement,
            kind=kind,
            tests=tuple(tests),
            entry_point=entry_point if kind == "call" else None,
            float_tolerance=tolerance,
        )
        return problem, []


def _sane_tolerance(value: Any) -> bool:
    """A tolerance the comparison can use and the database can store: a number (not a bool), finite (a
    5,000-digit JSON number reads as infinity, ``NaN`` compares false with everything) and at most
    ``MAX_TOLERANCE``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and 0 <= value <= MAX_TOLERANCE


def _argument_count(source: str) -> int | None:
    """How many arguments a call test passes (``[1, 2], 3``: 2); None when they do not parse."""
    try:
        call = parse_python(f"f({source})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    return len(call.args) + len(call.keywords) if isinstance(call, ast.Call) else None


def _text(data: dict[str, Any], name: str, errors: list[ProblemError]) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        errors.append(ProblemError(name, "must be a non-empty string"))
        return ""
    return value


def _check_source(
    field_name: str, source: str, what: str, errors: list[ProblemError], *, call: bool = False
) -> None:
    """An argument list parses inside ``f(...)``; an output parses as an expression."""
    try:
        parse_python(f"f({source})" if call else source, mode="eval")
    except SyntaxError as exc:
        reason = explain_syntax_error(source, exc, column_shift=2 if call else 0)
        errors.append(ProblemError(field_name, f"is not {what}: {reason}"))
