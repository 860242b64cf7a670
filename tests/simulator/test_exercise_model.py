"""The model as a classmate: the exercise's questions asked of the model in the white-box format, and
its replies (right, wrong, unreadable, misaligned) checked as a student's answers are."""

from __future__ import annotations

import pytest

from simulator.execution import Program
from simulator.execution.trace import Trace
from simulator.exercise_model import model_prompt, read_model_reply
from simulator.exercises import Checked, ExerciseQuestion, propose, question_at
from simulator.questions import ordinal, state_type
from tests.simulator.exercise_programs import FACT, PROGRAMS, all_traces, traced


@pytest.fixture(scope="module")
def traces() -> dict[str, Trace]:
    return all_traces()


def right_reply(program: Program, questions: list[ExerciseQuestion]) -> str:
    lines = program.code.split("\n")
    answers = []
    for q in questions:
        if q.kind == "next_line":
            answers.append(lines[int(q.answer) - 1].strip())
        elif q.kind == "value":
            answers.append(f"{q.answer}; {state_type(q.answer_type)}")
    result = next(q for q in questions if q.kind == "result")
    body = "\n".join([f"assert {program.call} == {result.answer}", *answers])
    return f"<reasoning>\nstep by step\n</reasoning>\n<answer>\n{body}\n</answer>"


def test_the_model_is_asked_the_same_questions_and_its_reply_is_checked(traces) -> None:
    program = PROGRAMS["squares"]
    questions = propose(traces["squares"], program)
    kinds = [q.kind for q in questions]
    assert kinds[0] == "result" and "next_line" in kinds and "value" in kinds
    prompt = model_prompt(program, questions)
    assert prompt is not None
    assert (
        "assert total([1, 2, 3]) == ????" in prompt and "Question1: Fill the assertion statement." in prompt
    )
    assert f"Question{len(questions)}:" in prompt and f"Question{len(questions) + 1}:" not in prompt
    first = next(q for q in questions if q.kind == "next_line")
    assert f"immediately after line {first.line}: `" in prompt
    assert f"has been executed for the {ordinal(first.occurrence)} time?" in prompt

    reply = right_reply(program, questions)
    assert [c.status for c in read_model_reply(program, questions, reply)] == ["right"] * len(questions)

    # the first path answer names the line after it, the first value is off by one, the type wrong
    wrong = reply.replace("assert total([1, 2, 3]) == 14", "assert total([1, 2, 3]) == 14.0")
    path_index = kinds.index("next_line")
    source = program.code.split("\n")[int(questions[path_index].answer) - 1].strip()
    wrong = wrong.replace(f"\n{source}\n", "\nreturn s\n", 1)
    checked = read_model_reply(program, questions, wrong)
    assert checked[0] == Checked("wrong", "Right value, but it is an int (14), not a float.", "14.0")
    assert checked[path_index] == Checked(
        "wrong", f"Not quite: it is line {questions[path_index].answer}.", "9"
    )

    value_index = kinds.index("value")
    value = questions[value_index]
    lines = reply.split("\n")
    at = lines.index(f"{value.answer}; int")
    for typed, status in (
        (f"{value.answer}; float", "wrong"),
        ("99; int", "wrong"),
        ("banana", "unreadable"),
    ):
        changed = "\n".join(lines[:at] + [typed] + lines[at + 1 :])
        assert read_model_reply(program, questions, changed)[value_index].status == status, typed


def test_a_reply_that_cannot_be_read_leaves_every_question_unreadable(traces) -> None:
    program = PROGRAMS["recursion"]
    questions = propose(traces["recursion"], program)
    for reply in ("", "I think it is 24.", "<answer>\n</answer>", "\x00" * 10):
        checked = read_model_reply(program, questions, reply)
        assert len(checked) == len(questions)
        assert all(
            c.status == "unreadable" and c.message.startswith("the model gave no answer") for c in checked
        )
    # answers that do not line up with the questions: none is read, the assertion still is
    short = "<answer>\nassert fact(4) == 24\nreturn 1\n</answer>"
    checked = read_model_reply(program, questions, short)
    assert checked[0].status == "right" and all(c.status == "unreadable" for c in checked[1:])
    # a line that is not in the code; a line that is on several lines, one of them the next one or not
    twice = Program(
        code="def f(x):\n    if x:\n        x = 1\n    x = 1\n    y = 2\n    y = 2\n    return x\n",
        call="f(2)",
    )
    q = question_at(traced(twice), twice, "next_line", 1)
    statuses = [
        read_model_reply(twice, [q], f"<answer>\nassert f(2) == 1\n{line}\n</answer>")[0].status
        for line in ("x = 2", "x = 1", "y = 2")
    ]
    assert statuses == ["unreadable", "right", "wrong"]


def test_no_model_prompt_without_a_plain_call_or_without_questions(traces) -> None:
    questions = propose(traces["recursion"], PROGRAMS["recursion"])
    assert model_prompt(PROGRAMS["recursion"], []) is None
    script = question_at(traces["running-total"], PROGRAMS["running-total"], "result", 0)
    assert model_prompt(PROGRAMS["running-total"], [script]) is None  # a script is not a call f(args)
    for call in ("math.factorial(4)", "fact(4) + 1", "fact(4)(1)", "(lambda: 1)()"):
        assert model_prompt(Program(code=FACT, call=call), questions) is None
    assert model_prompt(Program(code=FACT, call=" fact( 4 ) "), questions) is not None
    assert all(
        c.status == "unreadable" for c in read_model_reply(PROGRAMS["running-total"], questions, "<answer>")
    )
