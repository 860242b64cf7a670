"""Golden narrations: each samples/<case>.py traced in-process and narrated must equal
samples/<case>.nlex.txt (the full style) and samples/<case>.compact.txt (the compact style)
(UPDATE_GOLDEN=1 rewrites them), and each must check true against its own trace."""

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
from simulator.nlex.narrator import STYLES, narrate, step_sentences

SAMPLES = Path(__file__).parent / "samples"
CASES = sorted(p.stem for p in SAMPLES.glob("*.py"))
GOLDEN = {"full": "nlex.txt", "compact": "compact.txt"}  # samples/<case>.<suffix> per style


def traced_sample(case: str, max_steps: int = 10_000) -> tuple[Program, Trace]:
    """The sample's program (first line ``# call: f(...)`` or ``# stdin: '...'``) and its trace."""
    header, _, code = (SAMPLES / f"{case}.py").read_text().partition("\n")
    kind, _, rest = header.removeprefix("# ").partition(": ")
    if kind == "call":
        program = Program(code=code, call=rest)
        return program, trace_in_process(code, rest, max_steps=max_steps).trace
    program = Program(code=code, stdin=ast.literal_eval(rest))
    return program, trace_in_process(code, stdin=program.stdin or "", max_steps=max_steps).trace


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("case", CASES)
def test_narration_matches_golden(case: str, style: str) -> None:
    program, trace = traced_sample(case)
    actual = narrate(trace, program, style)
    golden = SAMPLES / f"{case}.{GOLDEN[style]}"
    if os.environ.get("UPDATE_GOLDEN") == "1" or not golden.exists():
        golden.write_text(actual)
    expected = golden.read_text()
    assert actual == expected, f"narration of {case} changed; actual (copy into {golden.name}):\n{actual}"


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("case", CASES)
def test_narration_checks_true_against_its_trace(case: str, style: str) -> None:
    program, trace = traced_sample(case)
    result = check_text(narrate(trace, program, style), trace, program_names(program.code))
    assert result.count("false") == 0 and result.count("unverifiable") == 0
    assert result.verdicts[-1].claim.kind == "answer" and result.verdicts[-1].verdict == "true"


def test_loops_are_summarised_after_two_iterations() -> None:
    program, trace = traced_sample("while_summary")
    text = narrate(trace, program)
    assert text.count("starts the next iteration") == 1
    assert "Lines 3-8 repeat 5 more times." in text
    assert text.rstrip().endswith("[ANSWER]\nassert f(20) == 7\n[/ANSWER]")


def test_a_generator_yields_and_resumes_and_is_called_once() -> None:
    code = (
        "def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i\n\n"
        "def f(n):\n    return list(evens(n))\n"
    )
    program = Program(code=code, call="f(3)")
    trace = trace_in_process(code, "f(3)").trace
    said = dict(step_sentences(trace, program))
    assert said[6] == "Line 4: `yield i` yields 0." and said[13] == "Line 4: `yield i` yields 2."
    assert said[7] == "Line 4: `yield i` - evens resumes with n = 3, i = 0."
    assert said[9] == "Line 2: `for i in range(n):` starts the next iteration; now i = 1."
    text = narrate(trace, program)
    assert "`return list(evens(n))` calling evens 1 time, returns [0, 2]." in text
    expression = "def f(n):\n    return sum(x for x in range(n) if x % 2)\n"  # a generator too
    said = [
        s for _, s in step_sentences(trace_in_process(expression, "f(4)").trace, Program(code=expression))
    ]
    assert sum("the generator expression starts" in s for s in said) == 1
    assert sum("the generator expression resumes" in s for s in said) >= 1
    result = check_text(text, trace, program_names(code))
    assert result.count("false") == 0
    assert any(v.claim.kind == "calls" and v.verdict == "true" for v in result.verdicts)  # evens 1 time


def test_stdin_programs_end_in_an_output_block() -> None:
    program, trace = traced_sample("stdin_loop")
    assert narrate(trace, program).endswith("<output>\n1\n4\n9\n16\ndone\n</output>\n")


def test_a_truncated_trace_says_so_and_gives_no_answer() -> None:
    program, trace = traced_sample("while_summary", max_steps=12)
    text = narrate(trace, program)
    assert "the step cap" in text and "[ANSWER]" not in text


def test_compact_is_shorter_and_summarises_loops_after_one_iteration() -> None:
    program, trace = traced_sample("while_summary")
    full, compact = narrate(trace, program), narrate(trace, program, "compact")
    assert len(compact) < 0.6 * len(full)
    assert "`" not in compact.split("[/THOUGHT]")[0]  # no source quoted
    assert "starts the next iteration" not in compact and "Lines 3-8 repeat 6 more times." in compact
    assert "Line 5: n = 10." in compact
    assert compact.split("[/THOUGHT]")[1] == full.split("[/THOUGHT]")[1]  # the same answer block


def test_compact_leaves_out_lines_that_state_nothing() -> None:
    code = "def f(xs):\n    out = []\n    for x in xs:\n        pass\n    return out"
    program = Program(code=code, call="f([1])")
    trace = trace_in_process(code, program.call).trace
    assert "Line 4: `pass` runs." in narrate(trace, program)
    compact = narrate(trace, program, "compact")
    assert "Line 4" not in compact and "Line 3: starts the loop; x = 1." in compact
    assert check_text(compact, trace, program_names(code)).count("false") == 0


def test_an_unknown_style_is_refused() -> None:
    program, trace = traced_sample("loop_sum")
    with pytest.raises(ValueError, match="compact"):
        narrate(trace, program, "terse")
