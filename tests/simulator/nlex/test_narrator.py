"""Golden narrations: each samples/<case>.py traced in-process and narrated must equal
samples/<case>.nlex.txt (UPDATE_GOLDEN=1 rewrites them), and must check true against its own trace."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from simulator.execution.program import Program
from simulator.execution.trace import Trace
from simulator.execution.tracer import trace_in_process
from simulator.nlex.check import check_text
from simulator.nlex.claims import program_names
from simulator.nlex.narrator import narrate

SAMPLES = Path(__file__).parent / "samples"
CASES = sorted(p.stem for p in SAMPLES.glob("*.py"))


def traced_sample(case: str, max_steps: int = 10_000) -> tuple[Program, Trace]:
    """The sample's program (first line ``# call: f(...)`` or ``# stdin: '...'``) and its trace."""
    header, _, code = (SAMPLES / f"{case}.py").read_text().partition("\n")
    kind, _, rest = header.removeprefix("# ").partition(": ")
    if kind == "call":
        program = Program(code=code, call=rest)
        return program, trace_in_process(code, rest, max_steps=max_steps).trace
    program = Program(code=code, stdin=ast.literal_eval(rest))
    return program, trace_in_process(code, stdin=program.stdin or "", max_steps=max_steps).trace


@pytest.mark.parametrize("case", CASES)
def test_narration_matches_golden(case: str) -> None:
    program, trace = traced_sample(case)
    actual = narrate(trace, program)
    golden = SAMPLES / f"{case}.nlex.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1" or not golden.exists():
        golden.write_text(actual)
    expected = golden.read_text()
    assert actual == expected, f"narration of {case} changed; actual (copy into {golden.name}):\n{actual}"


@pytest.mark.parametrize("case", CASES)
def test_narration_checks_true_against_its_trace(case: str) -> None:
    program, trace = traced_sample(case)
    result = check_text(narrate(trace, program), trace, program_names(program.code))
    assert result.count("false") == 0 and result.count("unverifiable") == 0
    assert result.verdicts[-1].claim.kind == "answer" and result.verdicts[-1].verdict == "true"


def test_loops_are_summarised_after_two_iterations() -> None:
    program, trace = traced_sample("while_summary")
    text = narrate(trace, program)
    assert text.count("starts the next iteration") == 1
    assert "Lines 3-8 repeat 5 more times." in text
    assert text.rstrip().endswith("[ANSWER]\nassert f(20) == 7\n[/ANSWER]")


def test_stdin_programs_end_in_an_output_block() -> None:
    program, trace = traced_sample("stdin_loop")
    assert narrate(trace, program).endswith("<output>\n1\n4\n9\n16\ndone\n</output>\n")


def test_a_truncated_trace_says_so_and_gives_no_answer() -> None:
    program, trace = traced_sample("while_summary", max_steps=12)
    text = narrate(trace, program)
    assert "the step cap" in text and "[ANSWER]" not in text
