"""Prediction exercises: questions about a real trace that a student answers while stepping through it.

An educator turns a trace into an exercise; the stepper stops at each question's ``step`` (a line is
about to run there), the student predicts, and the answer shows at ``reveal`` with the narration's
sentence for that step. Three kinds of question:

- ``next_line``: which line of the same frame runs after line N (the k-th time it runs)?
- ``value``: what is a local after line N has run (the k-th time)?
- ``result``: what does the call return (call mode), or what does the program print (script mode)?

Lines, occurrences and "the step after a line" are counted as the white-box questions count them
(``simulator.questions.executions``), so both agree; ``simulator.exercise_model`` asks the same
questions of the model in that format and checks its answers as a student's are checked.

Answers are typed text: ``check`` reads a value as a Python literal (never ``eval``), a line as a number,
printed output as the verifier compares it, and never raises, whatever the text.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from contextlib import suppress
from dataclasses import asdict, dataclass
from typing import Any, Literal

from simulator.compare import NOT_LITERAL, literal, outputs_match, same_value
from simulator.execution.program import Program
from simulator.execution.trace import Step, Trace, Value
from simulator.explore import Sentence, sentence_at, stepper_sentences
from simulator.questions import (
    Execution,
    executions,
    flow_matters,
    line_of,
    ordinal,
    statement_starts,
)
from simulator.source import parse_python

Kind = Literal["next_line", "value", "result"]
Status = Literal["right", "wrong", "unreadable"]
KINDS: tuple[Kind, ...] = ("next_line", "value", "result")
MAX_TEXT = 2000  # longer answers are not read (and answers longer than this are not asked)

_LINE_NUMBER = re.compile(r"\s*(?:line\s*)?([0-9]{1,6})\s*", re.IGNORECASE)
_EVENTS = {
    "call": "a call",
    "return": "a return",
    "exception": "an exception",
    "resume": "a resume",
    "yield": "a yield",
}
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_WHAT_A_VALUE_IS = (
    "a number (3, 2.5), a string in quotes ('abc'), True, False, None, or a list, tuple, dict or set "
    "of those ([1, 2])"
)


@dataclass(frozen=True)
class ExerciseQuestion:
    """One question of an exercise, with its answer and the narration that explains it.

    ``step`` is the trace index where the stepper stops and asks (line ``line`` is about to run for
    the ``occurrence``-th time; 0 for the result question, asked before anything runs) and ``reveal``
    the index where the answer shows. ``answer_type`` is the type name the trace records, for value
    questions and a call's result; "" otherwise (so a result question without one is about printed
    output). ``call`` is the call expression of a call-mode result question, for its prompt.
    """

    id: str
    kind: Kind
    step: int
    reveal: int
    line: int
    occurrence: int
    variable: str
    answer: str
    answer_type: str
    explanation: str
    call: str = ""

    def prompt(self) -> str:
        """The question as a student reads it."""
        if self.kind == "result":
            if not self.answer_type:
                return "What does the program print?"
            return f"What does {self.call or 'the call'} return? Type a Python value."
        where = f"Line {self.line} is about to run (the {ordinal(self.occurrence)} time)."
        if self.kind == "next_line":
            # other steps before the answer (a call, a statement over several lines): say which "next"
            after = (
                " once it has finished (and any function it calls has returned)"
                if self.reveal > self.step + 1
                else ""
            )
            return f"{where} Which line runs next{after}? Click it in the code, or type its number."
        return f"{where} What will `{self.variable}` be after it runs? Type a Python value."

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly; ``from_dict`` reverses it."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExerciseQuestion:
        """Read back a stored question; missing keys take empty values (a missing id is rebuilt).
        Raises ValueError on an unknown kind or a step, line or occurrence that is not a number."""
        kind = data.get("kind")
        if kind not in KINDS:
            raise ValueError(f"unknown question kind {kind!r}: expected one of {', '.join(KINDS)}")

        def number(key: str) -> int:
            try:
                return int(data.get(key) or 0)
            except (TypeError, ValueError, OverflowError):
                raise ValueError(f"{key} must be a whole number, not {data.get(key)!r}") from None

        def text(key: str) -> str:
            value = data.get(key)
            return "" if value is None else str(value)

        step, variable = number("step"), text("variable")
        return cls(
            id=text("id") or _question_id(kind, step, variable),
            kind=kind,
            step=step,
            reveal=number("reveal"),
            line=number("line"),
            occurrence=number("occurrence"),
            variable=variable,
            answer=text("answer"),
            answer_type=text("answer_type"),
            explanation=text("explanation"),
            call=text("call"),
        )


@dataclass(frozen=True)
class Checked:
    """How an answer fared: ``message`` speaks to the student; ``given`` is the answer normalised (so
    the same answer typed two ways groups together), "" when it could not be read."""

    status: Status
    message: str
    given: str


# --- proposing and adding questions ------------------------------------------------------------------


def propose(
    trace: Trace, program: Program, *, seed: int = 0, max_next_line: int = 3, max_value: int = 4
) -> list[ExerciseQuestion]:
    """Questions proposed from a real trace, sorted by step (the result question first, at step 0).

    Next-line questions where control flow matters (as ``questions.path_questions`` chooses them: an
    if/elif/for/while header, or a next line that is not N+1); value questions for a local new or
    changed by the line whose value is a Python literal; both drawn with ``random.Random(seed)`` and
    capped, so that they spread over the trace: never two at one step, and the first time each outcome
    happens (line N going to line M, line N setting a variable) before its repeats. Plus the result
    question when the program finished. Deterministic.
    """
    context = _Context(trace, program)
    rng = random.Random(seed)
    chosen: list[ExerciseQuestion] = []
    taken: set[int] = set()
    # Each candidate is ranked by how often its outcome (where the line goes next, or the variable it
    # sets) came before it: the first time each outcome happens is drawn before its repeats.
    flow = [
        (run, "", str(run.after.line))
        for run in context.runs
        if run.after and flow_matters(run, context.source(run.step.line))
    ]
    changes = [(run, name, name) for run in context.runs if run.after for name in run.after.changed]
    for kind, candidates, cap in (("next_line", flow, max_next_line), ("value", changes, max_value)):
        seen: Counter[tuple[int, str]] = Counter()
        ranked = []
        for run, variable, outcome in candidates:  # in execution order
            ranked.append((seen[run.step.line, outcome], run, variable))
            seen[run.step.line, outcome] += 1
        rng.shuffle(ranked)
        ranked.sort(key=lambda candidate: candidate[0])  # stable: random among equals
        picked = 0
        for _, run, variable in ranked:
            if picked >= cap:
                break
            if run.step.index in taken:
                continue
            try:
                question = context.next_line(run) if kind == "next_line" else context.value(run, variable)
            except ValueError:
                continue
            chosen.append(question)
            taken.add(run.step.index)
            picked += 1
    with suppress(ValueError):  # unless the program did not finish, or its result cannot be typed
        chosen.append(context.result())
    return sorted(chosen, key=lambda q: (q.step, q.kind != "result", q.variable))


def question_at(
    trace: Trace, program: Program, kind: Kind, step: int, variable: str = ""
) -> ExerciseQuestion:
    """The question an educator adds at ``step`` (a 0-based trace index; ignored for "result").
    Raises ValueError, with a message in the educator's words, when it cannot be asked there."""
    context = _Context(trace, program)
    if kind == "result":
        return context.result()
    if kind not in KINDS:
        raise ValueError(f"unknown question kind {kind!r}: expected one of {', '.join(KINDS)}")
    run = context.run_at(step)
    if kind == "next_line":
        return context.next_line(run)
    if not variable.strip():
        raise ValueError("name the variable to ask about")
    return context.value(run, variable.strip())


class _Context:
    """What building questions needs from one trace: its line executions (counted as the white-box
    questions count them), the source lines and, once asked for, the stepper's narration."""

    def __init__(self, trace: Trace, program: Program) -> None:
        self.trace, self.program = trace, program
        self.lines = program.code.split("\n")
        starts = statement_starts(program.code)
        statements = set(starts.values())
        runs = executions(trace, starts, include_module=program.shape != "call")
        self.runs = [run for run in runs if run.step.line in statements]
        self._sentences: list[Sentence] | None = None

    def explain(self, index: int) -> str:
        if self._sentences is None:
            self._sentences = stepper_sentences(self.trace, self.program)
        sentence = sentence_at(self._sentences, index)
        return sentence.text if sentence else ""

    def source(self, number: int) -> str:
        return line_of(self.lines, number)

    def run_at(self, index: int) -> Execution:
        steps = self.trace.steps
        if not 0 <= index < len(steps):
            where = f"choose one from 0 to {len(steps) - 1}" if steps else "it has none"
            raise ValueError(f"Step {index} is not a step of the trace: {where}")
        step = steps[index]
        if step.event != "line":
            raise ValueError(
                f"Step {index} is {_EVENTS.get(step.kind, step.kind)}, not a line about to run; "
                "choose a step where a line is about to run"
            )
        for run in self.runs:
            if run.step.index == index:
                return run
        raise ValueError(
            f"At step {index} line {step.line} is already running (inside a comprehension, a lambda or a "
            "statement over several lines); choose the step where it is about to run"
        )

    def next_line(self, run: Execution) -> ExerciseQuestion:
        after, line = run.after, run.step.line
        if after is None:
            raise ValueError(f"the trace ends after line {line}: there is no next line to ask about")
        if after.event != "line":
            raise ValueError(f"after line {line} {_ending(after)}: there is no next line to ask about")
        return self._question("next_line", run, after, "", str(after.line), "")

    def value(self, run: Execution, variable: str) -> ExerciseQuestion:
        after, line = run.after, run.step.line
        if after is None:
            raise ValueError(f"the trace ends before line {line} has run: its values are not known")
        found = self._frame_values(run.step, after.index).get(variable)
        if found is None:
            where = "the program" if run.step.function == "<module>" else run.step.function
            raise ValueError(f"`{variable}` is not a variable of {where} at that point")
        _typable(found, f"the value of `{variable}` after line {line} runs")
        return self._question("value", run, after, variable, found.repr, found.type)

    def result(self) -> ExerciseQuestion:
        steps, trace = self.trace.steps, self.trace
        last = steps[-1] if steps else None
        if trace.truncated or trace.error or last is None or last.event != "return" or last.depth != 0:
            raise ValueError("the trace stops before the program ends: its result is not known")
        if last.value is None or last.yielded:
            raise ValueError("the program stops with an exception: it has no result to ask about")
        if self.program.shape == "call":
            _typable(last.value, "the result")
            answer, answer_type, call = last.value.repr, last.value.type, (self.program.call or "").strip()
        else:
            answer, answer_type, call = trace.stdout, "", ""
            if len(answer) > MAX_TEXT:
                raise ValueError(f"the program prints more than {MAX_TEXT:,} characters: too long to type")
        explanation = self.explain(last.index)
        return ExerciseQuestion(
            "result", "result", 0, last.index, 0, 0, "", answer, answer_type, explanation, call
        )

    def _question(
        self, kind: Kind, run: Execution, after: Step, variable: str, answer: str, answer_type: str
    ) -> ExerciseQuestion:
        return ExerciseQuestion(
            id=_question_id(kind, run.step.index, variable),
            kind=kind,
            step=run.step.index,
            reveal=after.index,
            line=run.step.line,
            occurrence=run.k,
            variable=variable,
            answer=answer,
            answer_type=answer_type,
            explanation=self.explain(after.index),
        )

    def _frame_values(self, step: Step, upto: int) -> dict[str, Value]:
        """The locals of ``step``'s frame as they are at trace index ``upto``: its ``changed`` replayed."""
        steps = self.trace.steps[: upto + 1]
        if step.frame:
            mine = [s for s in steps if s.frame == step.frame]
        else:  # a trace without frame numbers: from the frame's call, the steps at its depth
            calls = [s.index for s in steps[: step.index + 1] if s.event == "call" and s.depth == step.depth]
            mine = [s for s in steps[calls[-1] if calls else 0 :] if s.depth == step.depth]
        values: dict[str, Value] = {}
        for s in mine:
            values.update(s.changed)
        return values


def _question_id(kind: str, step: int, variable: str) -> str:
    if kind == "result":
        return "result"
    return f"value-{step}-{variable}" if kind == "value" else f"{kind}-{step}"


def _ending(step: Step) -> str:
    """How a frame ends at ``step`` (a return step), as "after line N ..." goes on."""
    if step.function == "<module>":
        return "the program ends"
    if step.yielded:
        return "its function yields"
    return "its function returns" if step.value is not None else "its function raises an exception"


def _typable(value: Value, what: str) -> None:
    """Raise ValueError when a student could not type ``value``: cut short, too long, or no literal."""
    if value.truncated or len(value.repr) > MAX_TEXT:
        raise ValueError(f"{what} is too long to type as an answer")
    if literal(value.repr) is NOT_LITERAL:
        raise ValueError(f"{what} is not a Python literal ({an(value.type)} object): it cannot be typed")


# --- checking an answer ------------------------------------------------------------------------------


def check(question: ExerciseQuestion, text: str, *, lines: int) -> Checked:
    """Check a typed answer; ``lines`` is how many lines the code has (the range of a line number).
    Never raises, whatever the text."""
    if len(text) > MAX_TEXT:
        return Checked("unreadable", f"That answer is too long: keep it under {MAX_TEXT:,} characters.", "")
    if question.kind == "next_line":
        match = _LINE_NUMBER.fullmatch(text)
        number = int(match[1]) if match else 0
        if not 1 <= number <= lines:
            return Checked("unreadable", f"Type a line number from 1 to {lines}.", "")
        if str(number) == question.answer:
            return Checked("right", "Right.", str(number))
        return Checked("wrong", f"Not quite: it is line {question.answer}.", str(number))
    if question.kind == "result" and not question.answer_type:
        given = text.strip().replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
        if outputs_match(text, question.answer):
            return Checked("right", "Right.", given)
        printed = question.answer.rstrip("\n")
        return Checked(
            "wrong",
            f"Not quite: it prints\n{printed}" if printed.strip() else "Not quite: it prints nothing.",
            given,
        )
    return _check_value(question, text)


def _check_value(question: ExerciseQuestion, text: str) -> Checked:
    given = literal(text)
    if given is NOT_LITERAL:
        return Checked("unreadable", _why_unreadable(text), "")
    shown, name, answer = repr(given), type(given).__name__, question.answer
    expected = literal(answer)
    if expected is NOT_LITERAL:  # a stored question whose answer is no literal: compare the text
        return Checked("right", "Right.", shown) if shown == answer else _not_quite(answer, shown)
    same = same_value(given, expected, strict_bool=True)
    if same and name == (question.answer_type or name):
        return Checked("right", "Right.", shown)
    expected_type = question.answer_type or type(expected).__name__
    if same:  # 2 for 2.0
        return Checked(
            "wrong",
            f"Right value, but it is {an(expected_type)} ({answer}), not {an(name)}.",
            shown,
        )
    if same_value(given, expected):  # True for 1
        return Checked(
            "wrong",
            f"Not quite: it is {answer} ({an(expected_type)}), not {shown} ({an(name)}).",
            shown,
        )
    return _not_quite(answer, shown)


def _not_quite(answer: str, shown: str) -> Checked:
    return Checked("wrong", f"Not quite: it is {answer}.", shown)


def _why_unreadable(text: str) -> str:
    """Why ``text`` is not a Python value, in a student's words."""
    word = text.strip()
    if not word:
        return "Type an answer: a Python value such as 3, 'abc' or [1, 2]."
    if word.isidentifier():
        if word.lower() in ("true", "false", "none"):
            return f"{word} is not a Python value: write {word.capitalize()}, or '{word}' for a string."
        return f"{word} is not a Python value: a string needs quotes, as in '{word}'."
    try:
        parse_python(word, mode="eval")
        problem = ""
    except SyntaxError as exc:
        problem = exc.msg
    except (ValueError, RecursionError, MemoryError):
        problem = ""
    opener = re.match(r"'(.)' was never closed", problem)
    if opener:
        return f"A {opener[1]} is never closed: add its {_CLOSERS.get(opener[1], 'closing bracket')}."
    if problem.startswith("unterminated string"):
        return "A string is never closed: end it with the quote it starts with."
    if problem.startswith("unmatched"):
        return f"There is a closing {problem[-2:-1]} without its opening bracket."
    if problem.startswith("it holds"):  # NUL or a lone surrogate
        return f"That answer {problem.removeprefix('it ')}: type a Python value, {_WHAT_A_VALUE_IS}."
    if "nested" in problem:
        return "That answer nests its brackets too deeply to be read."
    return f"That is not a Python value. Type {_WHAT_A_VALUE_IS}."


def an(word: str) -> str:
    """The word with its indefinite article: "an int", "a float"."""
    return f"{'an' if word[:1].lower() in ('a', 'e', 'i', 'o', 'u') else 'a'} {word}"
