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

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from simulator.source import parse_python

Kind = Literal["stdin", "call"]


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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tests"] = [asdict(t) for t in self.tests]
        data.pop("extra")
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Problem:
        """Validate and build; raises ProblemError naming the first bad field."""
        if not isinstance(data, dict):
            raise ProblemError("(top level)", "a problem is a JSON object")
        title = _text(data, "title", required=True)
        statement = _text(data, "statement", required=True)
        kind = data.get("kind", "stdin")
        if kind not in ("stdin", "call"):
            raise ProblemError("kind", f"must be 'stdin' or 'call', not {kind!r}")
        entry_point = data.get("entry_point")
        if kind == "call" and not (isinstance(entry_point, str) and entry_point.isidentifier()):
            raise ProblemError("entry_point", "call problems need the name of the function to call")
        raw_tests = data.get("tests")
        if not isinstance(raw_tests, list) or not raw_tests:
            raise ProblemError("tests", "must be a non-empty list of {input, output, public}")
        tests = []
        for i, raw in enumerate(raw_tests):
            where = f"tests[{i}]"
            if not isinstance(raw, dict):
                raise ProblemError(where, "must be an object with input and output")
            test_in, test_out = raw.get("input"), raw.get("output")
            if not isinstance(test_in, str):
                raise ProblemError(f"{where}.input", "must be a string")
            if not isinstance(test_out, str):
                raise ProblemError(f"{where}.output", "must be a string")
            if kind == "call":
                _check_source(f"{where}.input", f"f({test_in})", "an argument list")
                _check_source(f"{where}.output", test_out, "a Python literal")
            public = raw.get("public", True)
            if not isinstance(public, bool):
                raise ProblemError(f"{where}.public", "must be true or false")
            tests.append(TestCase(input=test_in, output=test_out, public=public))
        if not any(t.public for t in tests):
            raise ProblemError("tests", "at least one test must be public")
        tolerance = data.get("float_tolerance")
        if tolerance is not None and (not isinstance(tolerance, int | float) or tolerance < 0):
            raise ProblemError("float_tolerance", "must be a non-negative number")
        return cls(
            title=title,
            statement=statement,
            kind=kind,
            tests=tuple(tests),
            entry_point=entry_point if kind == "call" else None,
            float_tolerance=tolerance,
        )


def _text(data: dict[str, Any], name: str, required: bool) -> str:
    value = data.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ProblemError(name, "must be a non-empty string")
    return value


def _check_source(field_name: str, source: str, what: str) -> None:
    try:
        parse_python(source, mode="eval")
    except SyntaxError as exc:
        raise ProblemError(field_name, f"is not {what}: {exc.msg}") from None
