"""The model as a classmate in an exercise: the same questions a student answers, asked of the served
model in ExecVerify's white-box format (``questions.render_prompt``: a path question for a next line,
a state question for a value, the assertion for the result), and its reply checked as a student's
answer is (``exercises.check``), so the results page can put its score beside the class's.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from simulator.compare import NOT_LITERAL, literal
from simulator.execution.program import Program
from simulator.exercises import Checked, ExerciseQuestion, an, check
from simulator.prompts.parsing import assert_answer, parse_answer_block
from simulator.questions import Question, QuestionSet, line_of, render_prompt, state_type
from simulator.source import parse_python


def model_prompt(program: Program, questions: Sequence[ExerciseQuestion]) -> str | None:
    """The white-box prompt (``questions.render_prompt``) asking the model every next-line and value
    question as a path or state question (the result question is its Question1, the assertion).
    None when the program is not a call ``name(args)`` or when there is no question."""
    qset = _question_set(program, questions)
    return render_prompt(qset) if qset is not None else None


def read_model_reply(program: Program, questions: Sequence[ExerciseQuestion], reply: str) -> list[Checked]:
    """The model's answer to each question, in the order given, checked as a student's would be."""
    qset = _question_set(program, questions)
    block = parse_answer_block(reply)
    if qset is None or not block.ok:
        why = "the model was not asked" if qset is None else f"the model gave no answer ({block.error})"
        return [Checked("unreadable", why, "") for _ in questions]
    asked = [q for q in questions if q.kind != "result"]
    aligned = len(block.answers) == len(asked)
    answers = iter(block.answers)
    lines = len(program.code.split("\n"))
    checked = []
    for question in questions:
        if question.kind == "result":
            span = assert_answer(block.assertion)
            checked.append(
                check(question, span.value, lines=lines)
                if span is not None
                else Checked("unreadable", "the model did not fill the assertion", "")
            )
        elif not aligned:
            why = f"the model gave {len(block.answers)} answers to {len(asked)} questions"
            checked.append(Checked("unreadable", why, ""))
        elif question.kind == "next_line":
            checked.append(_read_path(question, next(answers), program.code.split("\n")))
        else:
            checked.append(_read_state(question, next(answers), lines))
    return checked


def _question_set(program: Program, questions: Sequence[ExerciseQuestion]) -> QuestionSet | None:
    split = _split_call(program.call) if program.shape == "call" and program.call else None
    if split is None or not questions:
        return None
    lines = program.code.split("\n")
    asked = []
    for q in questions:
        source = line_of(lines, q.line)
        if q.kind == "next_line":
            answer = line_of(lines, int(q.answer)) if q.answer.isdigit() else ""
            asked.append(Question("path", q.line, q.occurrence, source, (answer,)))
        elif q.kind == "value":
            state = f"{q.answer}; {state_type(q.answer_type)}"
            asked.append(Question("state", q.line, q.occurrence, source, (state,), q.variable))
    return QuestionSet(code=program.code, entry_point=split[0], args=split[1], questions=tuple(asked))


def _split_call(call: str) -> tuple[str, str] | None:
    """``name(args)`` as (name, args), else None (a call of an attribute, a call of a call, ...)."""
    text = call.strip()
    try:
        node = parse_python(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or not text.endswith(")"):
        return None
    return node.func.id, text[text.index("(") + 1 : -1].strip()


def _read_path(question: ExerciseQuestion, answer: str, lines: list[str]) -> Checked:
    """A path answer is the source text of the next line: back to its number. Text that stands on
    several lines is right when one of them is the next line (the model cannot say which it meant)."""
    if answer.strip() == "-1":  # "the line never runs": it did run
        return Checked("wrong", f"Not quite: it is line {question.answer}.", "-1")
    numbers = [i for i, line in enumerate(lines, 1) if line.strip() and line.strip() == answer.strip()]
    if not numbers:
        return Checked("unreadable", f"the model's answer `{answer}` is not a line of the code", "")
    number = question.answer if question.answer in map(str, numbers) else str(numbers[0])
    return check(question, number, lines=len(lines))


def _read_state(question: ExerciseQuestion, answer: str, lines: int) -> Checked:
    """A state answer is ``value; type``: the value checked as a student's, then the type it names."""
    if ";" not in answer:
        return Checked("unreadable", f"the model's answer `{answer}` is not `value; type`", "")
    value, named = (part.strip() for part in answer.rsplit(";", 1))
    if literal(value) is NOT_LITERAL and named == "str":
        value = repr(value)  # an unquoted string, as ExecVerify accepts
    checked = check(question, value, lines=lines)
    expected = state_type(question.answer_type)
    if checked.status == "right" and state_type(named) != expected:
        return Checked(
            "wrong",
            f"Right value, but it is {an(expected)}, not {an(named)}.",
            checked.given,
        )
    return checked
