"""Golden traces (PySnooper style): each samples/<case>.py traced in-process, rendered with
``Trace.render``, must equal samples/<case>.trace.txt. Run with UPDATE_GOLDEN=1 to rewrite them."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from simulator.execution.tracer import trace_in_process

SAMPLES = Path(__file__).parent / "samples"
CASES = sorted(p.stem for p in SAMPLES.glob("*.py"))


def load_sample(path: Path) -> tuple[str, str | None, str]:
    """(code, call, stdin) from a sample whose first line is ``# call: f(...)`` or ``# stdin: '...'``."""
    header, _, code = path.read_text().partition("\n")
    kind, _, rest = header.removeprefix("# ").partition(": ")
    if kind == "call":
        return code, rest, ""
    return code, None, ast.literal_eval(rest)


@pytest.mark.parametrize("case", CASES)
def test_trace_matches_golden(case: str) -> None:
    code, call, stdin = load_sample(SAMPLES / f"{case}.py")
    actual = trace_in_process(code, call, stdin=stdin).trace.render()
    golden = SAMPLES / f"{case}.trace.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1" or not golden.exists():
        golden.write_text(actual)
    expected = golden.read_text()
    assert actual == expected, f"trace of {case} changed; actual (copy into {golden.name}):\n{actual}"


def test_there_are_golden_samples() -> None:
    assert len(CASES) >= 5
