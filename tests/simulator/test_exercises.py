"""Prediction exercises on real traces: proposing questions (golden files), adding them at a step and
checking typed answers (hostile ones included)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from simulator.execution import Program
from simulator.execution.trace import Trace
from simulator.exercises import (
    Checked,
    ExerciseQuestion,
    check,
    propose,
    question_at,
)
from tests.simulator.exercise_programs import PROGRAMS, SQUARES, all_traces, traced

GOLDEN = Path(__file__).parent / "golden" / "exercises"


@pytest.fixture(scope="module")
def traces() -> dict[str, Trace]:
    return all_traces()


def lines_of(program: Program) -> int:
    return len(program.code.split("\n"))


# --- propose: golden files --------------------------------------------------------------------------


def test_proposed_questions_match_their_golden_files(traces: dict[str, Trace]) -> None:
    """Regenerate on purpose with ``EXECSIM_REGOLD=1`` (as the pipeline's golden runs) and read the diff:
    each question must make sense to a student and its explanation must be about its line."""
    for name, program in PROGRAMS.items():
        questions = propose(traces[name], program)
        found = {
            "program": {"code": program.code, "call": program.call, "stdin": program.stdin},
            "questions": [{**q.to_dict(), "prompt": q.prompt()} for q in questions],
        }
        path = GOLDEN / f"{name}.json"
        if os.environ.get("EXECSIM_REGOLD"):
            GOLDEN.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
        assert found == json.loads(path.read_text()), f"{name}: the proposed questions changed"


def test_proposed_questions_are_deterministic_spread_and_answered_by_the_trace(traces) -> None:
    for name, program in PROGRAMS.items():
        trace = traces[name]
        questions = propose(trace, program, seed=3)
        assert questions == propose(trace, program, seed=3)
        steps = [q.step for q in questions]
        assert steps == sorted(steps) and len(set(steps)) == len(steps), name  # never two at one step
        assert len({q.id for q in questions}) == len(questions)
        assert sum(q.kind == "next_line" for q in questions) <= 3
        assert sum(q.kind == "value" for q in questions) <= 4
        for q in questions:
            assert check(q, q.answer, lines=lines_of(program)).status == "right", (name, q)
            if q.kind != "result":
                assert trace.steps[q.step].event == "line" and trace.steps[q.step].line == q.line
                # the same question, asked by an educator at that step, is the one proposed
                assert question_at(trace, program, q.kind, q.step, q.variable) == q
                assert q.explanation.startswith(f"Line {q.line}:"), q  # about the line that just ran
                assert trace.steps[q.reveal].frame == trace.steps[q.step].frame
            if q.kind == "next_line":
                assert trace.steps[q.reveal].event == "line" and trace.steps[q.reveal].line == int(q.answer)
        assert ExerciseQuestion.from_dict(json.loads(json.dumps(questions[0].to_dict()))) == questions[0]


def test_recursion_counts_the_line_over_every_call_and_asks_the_base_case(traces) -> None:
    program, trace = PROGRAMS["recursion"], traces["recursion"]
    questions = propose(trace, program)
    assert questions[0].id == "result" and questions[0].answer == "24" and questions[0].answer_type == "int"
    assert questions[0].prompt() == "What does fact(4) return? Type a Python value."
    # line 2 runs 4 times, once per call: the 4th (n == 1) goes to line 3, the others to line 4
    flow = {q.occurrence: q.answer for q in questions if q.kind == "next_line"}
    assert flow[4] == "3" and set(flow) - {4} and all(flow[k] == "4" for k in flow if k != 4)
    base = question_at(trace, program, "next_line", 10)
    assert (base.line, base.occurrence, base.answer, base.reveal) == (2, 4, "3", 11)
    assert base.prompt() == (
        "Line 2 is about to run (the 4th time). Which line runs next? "
        "Click it in the code, or type its number."
    )
    assert base.explanation == "Line 2: `if n <= 1:` the condition holds."
    assert check(base, "3", lines=5) == Checked("right", "Right.", "3")
    assert check(base, "line 4", lines=5) == Checked("wrong", "Not quite: it is line 3.", "4")


def test_a_loop_with_a_call_reveals_the_value_in_the_callers_frame(traces) -> None:
    program, trace = PROGRAMS["squares"], traces["squares"]
    # step 8: line 8 `s += square(x)` about to run the 2nd time; square's frame runs in between
    q = question_at(trace, program, "value", 8, "s")
    assert (q.line, q.occurrence, q.answer, q.answer_type, q.id) == (8, 2, "5", "int", "value-8-s")
    assert trace.steps[q.reveal].function == "total" and trace.steps[q.reveal].event == "line"
    assert q.explanation == "Line 8: `s += square(x)` after square returned 4; now s = 5."
    assert q.prompt() == (
        "Line 8 is about to run (the 2nd time). What will `s` be after it runs? Type a Python value."
    )
    # a variable the line does not change: its value after the line, replayed from the frame
    x = question_at(trace, program, "value", 8, "x")
    assert (x.answer, x.reveal) == ("2", q.reveal)
    # the loop's exit: the 4th run of the for line goes to the return
    exit_ = question_at(trace, program, "next_line", 17)
    assert (exit_.line, exit_.occurrence, exit_.answer) == (7, 4, "9")
    # a question inside the callee
    inner = question_at(trace, program, "next_line", 3)
    assert (inner.line, inner.answer) == (8, "7")  # the next line of total's frame, not square's line 2
    assert inner.prompt() == (
        "Line 8 is about to run (the 1st time). Which line runs next once it has finished (and any function "
        "it calls has returned)? Click it in the code, or type its number."
    )


def test_script_mode_asks_what_the_program_prints(traces) -> None:
    program, trace = PROGRAMS["running-total"], traces["running-total"]
    result = question_at(trace, program, "result", 999)  # the step is ignored
    assert (result.answer, result.answer_type, result.step, result.reveal) == ("10\n30\n60\n", "", 0, 27)
    assert result.prompt() == "What does the program print?"
    assert check(result, "10\n30\n60", lines=12) == Checked("right", "Right.", "10\n30\n60")
    assert check(result, "  10 30   60  \n\n", lines=12).status == "right"
    assert check(result, "10\n30\n", lines=12) == Checked(
        "wrong", "Not quite: it prints\n10\n30\n60", "10\n30"
    )
    # the module frame is asked about too: a def line goes past the function's body
    define = question_at(trace, program, "next_line", 1)
    assert (define.line, define.answer) == (1, "5")


# --- question_at: what cannot be asked ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "step", "variable", "message"),
    [
        (
            "recursion",
            "next_line",
            12,
            "",
            "Step 12 is a return, not a line about to run; choose a step where a line is about to run",
        ),
        ("recursion", "value", 0, "n", "Step 0 is a call, not a line about to run"),
        (
            "recursion",
            "next_line",
            11,
            "",
            "after line 3 its function returns: there is no next line to ask about",
        ),
        ("recursion", "next_line", 99, "", "Step 99 is not a step of the trace: choose one from 0 to 15"),
        ("recursion", "next_line", -1, "", "Step -1 is not a step of the trace"),
        ("recursion", "value", 1, "x", "`x` is not a variable of fact at that point"),
        ("recursion", "value", 1, "", "name the variable to ask about"),
        (
            "linked-list",
            "value",
            3,
            "head",
            "the value of `head` after line 10 runs is not a Python literal (a Node",
        ),
        ("linked-list", "result", 0, "", "the result is not a Python literal (a Node object)"),
        ("running-total", "next_line", 3, "", "after line 12 the program ends: there is no next line"),
        ("squares", "guess", 1, "", "unknown question kind 'guess'"),
    ],
)
def test_question_at_says_why_a_question_cannot_be_asked(traces, name, kind, step, variable, message) -> None:
    with pytest.raises(ValueError) as error:
        question_at(traces[name], PROGRAMS[name], kind, step, variable)
    assert str(error.value).startswith(message)


def test_no_result_question_when_the_program_did_not_finish() -> None:
    program = Program(code=SQUARES, call="total([1, 2, 3])")
    cut = traced(program, max_steps=6)
    assert cut.truncated
    assert all(q.kind != "result" for q in propose(cut, program))
    with pytest.raises(ValueError, match="the trace stops before the program ends"):
        question_at(cut, program, "result", 0)
    failing = Program(code="def f(x):\n    y = x + 1\n    return 1 / 0\n", call="f(1)")
    trace = traced(failing)
    with pytest.raises(ValueError, match="exception"):
        question_at(trace, failing, "result", 0)
    assert [q.id for q in propose(trace, failing)] == ["value-1-y"]


# --- check: typed answers ----------------------------------------------------------------------------


def value_question(answer: str, answer_type: str) -> ExerciseQuestion:
    return ExerciseQuestion("value-4-total", "value", 4, 5, 4, 1, "total", answer, answer_type, "")


NEXT = ExerciseQuestion("next_line-3", "next_line", 3, 4, 3, 2, "", "5", "", "")
PRINTS = ExerciseQuestion("result", "result", 0, 9, 0, 0, "", "1\n2\n", "", "")
RETURNS = ExerciseQuestion("result", "result", 0, 9, 0, 0, "", "[1, 2]", "list", "", call="f([1, 2])")


def test_values_are_read_as_literals_and_normalised() -> None:
    q = value_question("[1, 2]", "list")
    assert check(q, " [1,2] ", lines=12) == Checked("right", "Right.", "[1, 2]")
    assert check(q, "[2, 1]", lines=12) == Checked("wrong", "Not quite: it is [1, 2].", "[2, 1]")
    assert check(q, "(1, 2)", lines=12).status == "wrong"  # a tuple is not the list
    text = value_question("'abc'", "str")
    assert check(text, '"abc"', lines=12) == Checked("right", "Right.", "'abc'")
    assert check(RETURNS, "[1, 2]", lines=12).status == "right"
    assert RETURNS.prompt() == "What does f([1, 2]) return? Type a Python value."


def test_types_must_agree_int_and_float_bool_and_int() -> None:
    assert check(value_question("2.0", "float"), "2", lines=12) == Checked(
        "wrong", "Right value, but it is a float (2.0), not an int.", "2"
    )
    assert check(value_question("1", "int"), "1.0", lines=12) == Checked(
        "wrong", "Right value, but it is an int (1), not a float.", "1.0"
    )
    assert check(value_question("True", "bool"), "1", lines=12) == Checked(
        "wrong", "Not quite: it is True (a bool), not 1 (an int).", "1"
    )
    assert check(value_question("1", "int"), "True", lines=12).status == "wrong"
    assert check(value_question("True", "bool"), "True", lines=12).status == "right"
    assert check(value_question("None", "NoneType"), "None", lines=12).status == "right"


def test_next_line_answers_are_line_numbers_in_range() -> None:
    for text in ("5", " 5\n", "line 5", "Line   5"):
        assert check(NEXT, text, lines=12) == Checked("right", "Right.", "5")
    assert check(NEXT, "4", lines=12) == Checked("wrong", "Not quite: it is line 5.", "4")
    for text in ("0", "13", "five", "", "-1", "5.0", "\x00", "\ud800", "5" * 3000):
        checked = check(NEXT, text, lines=12)
        assert checked.status == "unreadable" and checked.given == "", text[:10]
        if len(text) < 2000:
            assert checked.message == "Type a line number from 1 to 12."


def test_printed_output_is_compared_as_the_verifier_does() -> None:
    assert check(PRINTS, "1\n2", lines=12) == Checked("right", "Right.", "1\n2")
    assert check(PRINTS, "1 2\n", lines=12).status == "right"
    assert check(PRINTS, "2\n1", lines=12) == Checked("wrong", "Not quite: it prints\n1\n2", "2\n1")
    silent = ExerciseQuestion("result", "result", 0, 3, 0, 0, "", "", "", "")
    assert check(silent, "", lines=3).status == "right"
    assert check(silent, "0", lines=3).message == "Not quite: it prints nothing."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "abc is not a Python value: a string needs quotes, as in 'abc'."),
        ("true", "true is not a Python value: write True, or 'true' for a string."),
        ("[1, 2", "A [ is never closed: add its ]."),
        ("{1: 2", "A { is never closed: add its }."),
        ("'abc", "A string is never closed: end it with the quote it starts with."),
        ("1, 2]", "There is a closing ] without its opening bracket."),
        ("", "Type an answer: a Python value such as 3, 'abc' or [1, 2]."),
        ("   ", "Type an answer: a Python value such as 3, 'abc' or [1, 2]."),
        ("x" * 100_000, "That answer is too long: keep it under 2,000 characters."),
        ("1\x00", "That answer holds a NUL character (\\x00), which Python source cannot hold"),
        ("'\ud800'", "That answer holds a lone surrogate (\\ud800), which Python source cannot hold"),
        ("[" * 1000 + "]" * 1000, "That answer nests its brackets too deeply to be read."),
        ("x + 1", "That is not a Python value. Type a number (3, 2.5), a string in quotes ('abc'), True"),
    ],
)
def test_unreadable_values_say_why(text: str, message: str) -> None:
    for question in (value_question("[1, 2]", "list"), RETURNS):
        checked = check(question, text, lines=12)
        assert checked.status == "unreadable" and checked.given == ""
        assert checked.message.startswith(message)


def test_hostile_text_never_raises_whatever_the_question() -> None:
    hostile = ["x" * 100_000, "\x00", "\ud800", "[" * 1999, "(" * 5000, "9" * 1999, "1e999", "'\\N{foo}'"]
    hostile += ["{[(" * 600, "line " + "9" * 1990, "\r\n" * 999, "\u2028", "b'\\xff'", "1j", "{1, 2}"]
    for question in (NEXT, PRINTS, RETURNS, value_question("[1, 2]", "list"), value_question("'a'", "str")):
        for text in hostile:
            checked = check(question, text, lines=12)
            assert checked.status in ("right", "wrong", "unreadable")
            checked.message.encode()  # printable: no lone surrogate comes back
            checked.given.encode()


# --- stored questions ---------------------------------------------------------------------------------


def test_questions_round_trip_and_are_read_back_tolerantly() -> None:
    assert ExerciseQuestion.from_dict(RETURNS.to_dict()) == RETURNS
    sparse = ExerciseQuestion.from_dict({"kind": "value", "step": "4", "variable": "total", "answer": "3"})
    assert (sparse.id, sparse.step, sparse.line, sparse.explanation) == ("value-4-total", 4, 0, "")
    with pytest.raises(ValueError, match="unknown question kind"):
        ExerciseQuestion.from_dict({"kind": "path"})
    with pytest.raises(ValueError, match="unknown question kind"):
        ExerciseQuestion.from_dict({})
    with pytest.raises(ValueError, match="step must be a whole number"):
        ExerciseQuestion.from_dict({"kind": "value", "step": "four"})
