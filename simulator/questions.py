"""ExecVerify's white-box questions, asked from a real Trace, and their scoring.

Two kinds of question about one call ``f(args)`` (ExecVerify, arXiv 2603.11226; templates from REval):

- path (control flow): "which line runs immediately after line N has run for the k-th time?"; the
  answer is the verbatim source text of that next line, or ``-1`` for a line that never runs;
- state (data flow): "what are the value and type of variable v after line N has run for the k-th
  time?"; the answer is ``value; type`` with type one of int/float/bool/complex/str/list/tuple/dict/set,
  else ``object``.

Selection rules (papers.md, "White-box questions"): the program must contain a for/while loop or have
at least 5 lines, and the call's arguments must not mention the function; at most 5 path and 5 state
questions, drawn at random (deterministic given ``seed``). Path questions are asked only where control
flow matters: the line is an if/elif/for/while header, or the next line is not N+1; ``else`` lines and
lines of 5 characters or fewer are skipped. State questions are asked for every local that is new or
changed by line N.

Where this differs from the released ExecVerify scripts, on purpose:

- "the k-th time" counts every execution of line N in the whole call, in the order the executions
  start (in a recursion the outer call's line is the 1st even though it finishes last); theirs
  double-counts a line on its return event and skips loop exits when counting state questions;
- the frames of comprehensions, generator expressions and lambdas are part of the line that runs
  them, as a reader counts: their line events are not executions of it (a list comprehension over 3
  items is not 3 more runs of its line), and their variables are not asked about;
- the next line is the next line *of the same frame* (a call into a helper is not "the next line"),
  and a line after which its frame returns or raises gets no path question;
- keywords are matched as keywords (theirs matches the substring "if", so ``diff = 1`` counted);
- only lines where a statement starts are asked about, continuation lines of a multi-line statement
  are folded into their statement, and a state answer whose repr is not a Python literal (an object
  at some address) is not asked, since no literal can be equal to it.

Scoring: path answers match after ``strip()`` against any acceptable answer; state answers need the
exact type name and a value equal as a Python literal (a ``str`` value may be given with or without
quotes, as in theirs).
"""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from simulator.compare import NOT_LITERAL, literal, same_value
from simulator.execution.trace import Step, Trace, Value
from simulator.prompts.parsing import AnswerBlock
from simulator.source import parse_python

MAX_PATH_QUESTIONS = 5
MAX_STATE_QUESTIONS = 5
STATE_TYPES = ("int", "float", "bool", "complex", "str", "list", "tuple", "dict", "set")
NEVER = "-1"

QuestionKind = Literal["path", "state"]
CONTROL = re.compile(r"(if|elif|for|while|async\s+for)\b")
# Frames of an expression inside a line (co_name of their code): they run as part of that line.
_EXPRESSION_FRAMES = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>", "<lambda>"})


@dataclass(frozen=True)
class Question:
    """One white-box question; ``answers`` lists every acceptable answer (usually one)."""

    kind: QuestionKind
    line: int
    occurrence: int  # k: "after line N has run for the k-th time"
    source: str  # the verbatim text of line N
    answers: tuple[str, ...]
    variable: str | None = None  # state questions only

    def text(self, call: str) -> str:
        where = f"line {self.line}: `{self.source.strip()}`"
        nth = ordinal(self.occurrence)
        if self.kind == "path":
            return (
                f"While executing {call}, which line of code is executed immediately after {where} "
                f"has been executed for the {nth} time?"
            )
        return (
            f"Is {where} executed when {call} is called? If so, what are the value and type of the "
            f"variable '{self.variable}' after line {self.line} has been executed for the {nth} time?"
        )


@dataclass(frozen=True)
class QuestionSet:
    """The questions about one call ``entry_point(args)`` of ``code``: path questions, then state ones."""

    code: str
    entry_point: str
    args: str
    questions: tuple[Question, ...] = ()
    seed: int = 0

    @property
    def call(self) -> str:
        return f"{self.entry_point}({self.args})"

    @property
    def path(self) -> tuple[Question, ...]:
        return tuple(q for q in self.questions if q.kind == "path")

    @property
    def state(self) -> tuple[Question, ...]:
        return tuple(q for q in self.questions if q.kind == "state")

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly (a dataset column); ``from_dict`` reverses it."""
        data = asdict(self)
        data["questions"] = [{**asdict(q), "answers": list(q.answers)} for q in self.questions]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QuestionSet:
        questions = tuple(
            Question(**{**q, "answers": tuple(q["answers"])}) for q in data.get("questions", ())
        )
        return cls(
            code=data["code"],
            entry_point=data["entry_point"],
            args=data["args"],
            questions=questions,
            seed=data.get("seed", 0),
        )


# --- selection -------------------------------------------------------------------------------------


def is_eligible(code: str, entry_point: str, args: str) -> bool:
    """ExecVerify's program filter: a for/while loop or >= 5 lines, and args that don't name the function.

    >>> is_eligible("def f(x):\\n    for i in x:\\n        pass", "f", "[1]")
    True
    >>> is_eligible("def f(x):\\n    return x", "f", "[1]")
    False
    >>> is_eligible("def f(x):\\n    for i in x:\\n        pass", "f", "f")
    False
    """
    try:
        tree = parse_python(code)
    except SyntaxError:
        return False
    if entry_point in args:
        return False
    has_loop = any(isinstance(node, ast.For | ast.AsyncFor | ast.While) for node in ast.walk(tree))
    return has_loop or len(code.strip().splitlines()) >= 5


def select_questions(
    code: str,
    entry_point: str,
    args: str,
    trace: Trace,
    *,
    seed: int = 0,
    max_path: int = MAX_PATH_QUESTIONS,
    max_state: int = MAX_STATE_QUESTIONS,
    include_module: bool = False,
) -> QuestionSet | None:
    """Up to ``max_path`` path and ``max_state`` state questions about ``entry_point(args)``, drawn with
    ``random.Random(seed)``; None when the program fails the filter (see ``is_eligible``).

    ``trace`` is the real trace of the call, with line numbers of ``code``. Module-level frames are left
    out unless ``include_module`` (a call-style trace has none worth asking about).
    """
    if not is_eligible(code, entry_point, args):
        return None
    rng = random.Random(seed)
    paths = path_questions(code, trace, include_module=include_module)
    states = state_questions(code, trace, include_module=include_module)
    rng.shuffle(paths)
    rng.shuffle(states)
    return QuestionSet(
        code=code,
        entry_point=entry_point,
        args=args,
        questions=tuple(paths[:max_path] + states[:max_state]),
        seed=seed,
    )


def path_questions(code: str, trace: Trace, *, include_module: bool = False) -> list[Question]:
    """Every candidate path question, in execution order (never-run lines last, by line number)."""
    lines = code.split("\n")
    starts = statement_starts(code)
    statement_lines = set(starts.values())
    runs = executions(trace, starts, include_module)
    questions: list[Question] = []
    for run in runs:
        source = line_of(lines, run.step.line)
        if run.step.line not in statement_lines or not flow_matters(run, source):
            continue
        assert run.after is not None
        questions.append(Question("path", run.step.line, run.k, source, (line_of(lines, run.after.line),)))
    if not trace.truncated:
        executed = {run.step.line for run in runs}
        body = _function_body_lines(code, include_module)
        for number in sorted(statement_lines - executed):
            source = line_of(lines, number)
            if askable(source) and number in body:
                questions.append(Question("path", number, 1, source, (NEVER,)))
    return questions


def state_questions(code: str, trace: Trace, *, include_module: bool = False) -> list[Question]:
    """Every candidate state question, in execution order: one per local new or changed by a line."""
    lines = code.split("\n")
    starts = statement_starts(code)
    statement_lines = set(starts.values())
    questions: list[Question] = []
    for run in executions(trace, starts, include_module):
        if run.after is None or run.step.line not in statement_lines:
            continue
        source = line_of(lines, run.step.line)
        for name, value in run.after.changed.items():
            answer = _state_answer(value)
            if answer is not None:
                questions.append(Question("state", run.step.line, run.k, source, (answer,), variable=name))
    return questions


def state_type(type_name: str) -> str:
    """The type as ExecVerify names it: one of STATE_TYPES, else "object"."""
    return type_name if type_name in STATE_TYPES else "object"


def _state_answer(value: Value) -> str | None:
    if literal(value.repr) is NOT_LITERAL:
        return None
    return f"{value.repr}; {state_type(value.type)}"


def askable(source: str) -> bool:
    """Whether a line is worth a question: more than 5 characters, and no ``else`` line."""
    text = source.strip()
    return len(text) > 5 and not text.startswith("else")


def flow_matters(run: Execution, source: str) -> bool:
    """Whether what runs after this execution of the line ``source`` is worth asking: a control-flow
    line (``if``, ``for``, ``while``, ...) or a jump, and not the frame's end (nor a cut trace)."""
    after = run.after
    if not askable(source) or after is None or after.event != "line" or after.line == run.step.line:
        return False
    return bool(CONTROL.match(source.strip())) or after.line != run.step.line + 1


def line_of(lines: list[str], number: int) -> str:
    """Line ``number`` (from 1) of ``lines``; "" outside them."""
    return lines[number - 1] if 0 < number <= len(lines) else ""


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# --- executions: the trace regrouped per function activation --------------------------------------


@dataclass
class Execution:
    """One execution of a line: its step, k (how many times that line had run, this one included) and
    the next line/return step of the same frame (whose ``changed`` holds this line's effects)."""

    step: Step
    k: int
    after: Step | None = None


@dataclass
class _Frame:
    depth: int
    module: bool
    last: Execution | None = None
    last_raw_line: int = 0
    pending: dict[str, Value] = field(default_factory=dict)  # effects seen on folded continuation lines


def executions(trace: Trace, starts: dict[int, int], include_module: bool) -> list[Execution]:
    """Line executions in step order, each linked to the step that follows it in its own frame.

    Steps are grouped by their ``frame`` number; in traces without one, a ``call`` step opens a frame,
    a ``return`` step closes it and other steps belong to the innermost open frame at their depth. Line
    numbers are mapped to their statement's first line; a line step that stays within the statement of
    the previous line step of its frame (a continuation line of a multi-line statement) is folded:
    its effects are carried to the next step of that frame. Steps of comprehension, generator
    expression and lambda frames are left out: they are the work of the line that runs them.
    """
    stack: list[_Frame] = []
    by_number: dict[int, _Frame] = {}
    found: list[Execution] = []
    counts: Counter[int] = Counter()
    for original in trace.steps:
        raw_line = original.line
        step = Step(**{**original.__dict__, "changed": dict(original.changed)})
        step.line = starts.get(raw_line, raw_line)
        if step.frame:  # the tracer numbered the frame instances: use them
            frame = by_number.setdefault(step.frame, _Frame(step.depth, step.function == "<module>"))
        else:  # older traces: rebuild frames from call/return events and depths
            while stack and stack[-1].depth > step.depth:
                stack.pop()
            if step.event == "call" and stack and stack[-1].depth == step.depth:
                stack.pop()
            if step.event == "call" or not stack or stack[-1].depth < step.depth:
                stack.append(_Frame(step.depth, module=step.function == "<module>"))
            frame = stack[-1]
            if step.event == "return":
                stack.pop()
        if step.event not in ("line", "return") or step.function in _EXPRESSION_FRAMES:
            continue
        last = frame.last
        if (
            step.event == "line"
            and last is not None
            and last.step.line == step.line
            and last.after is None
            and (raw_line != step.line or frame.last_raw_line != step.line)
        ):
            frame.pending.update(step.changed)  # still the same statement
            frame.last_raw_line = raw_line
            continue
        if frame.pending:
            step.changed = {**frame.pending, **step.changed}
            frame.pending = {}
        if last is not None and last.after is None:
            last.after = step
        if step.event == "line" and (include_module or not frame.module):
            counts[step.line] += 1
            frame.last = Execution(step, counts[step.line])
            found.append(frame.last)
        frame.last_raw_line = raw_line
    return found


# --- source structure -----------------------------------------------------------------------------


def statement_starts(code: str) -> dict[int, int]:
    """Map each source line to the first line of the statement it belongs to (header lines of a
    compound statement map to the header). Lines outside any statement are absent."""
    try:
        tree = parse_python(code)
    except SyntaxError:
        return {}
    starts: dict[int, int] = {}
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    nodes.sort(key=lambda n: (n.lineno, -(n.end_lineno or n.lineno)))  # outer before inner
    for node in nodes:
        if isinstance(node, ast.Global | ast.Nonlocal) or _is_docstring(node):
            continue
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = body[0].lineno - 1  # a compound statement: its header lines only
            if getattr(node, "decorator_list", None):
                continue
        else:
            last = node.end_lineno or node.lineno
        for number in range(node.lineno, max(last, node.lineno) + 1):
            starts[number] = node.lineno
    return starts


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _function_body_lines(code: str, include_module: bool) -> set[int]:
    """Lines that can run inside a function (or anywhere, with ``include_module``); def lines excluded."""
    tree = parse_python(code)
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    if include_module:
        lines.update(range(1, len(code.split("\n")) + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            lines.discard(node.lineno)
    return lines


# --- the prompt -----------------------------------------------------------------------------------


def numbered_code(code: str, entry_point: str, args: str) -> str:
    """The code, a blank line and ``assert f(args) == ????``, numbered like the trace (blank lines keep
    their number but show none)."""
    text = f"{code.rstrip()}\n\nassert {entry_point}({args}) == ????"
    return "\n".join(f"{i}\t{line}" if line.strip() else "" for i, line in enumerate(text.split("\n"), 1))


def render_prompt(qset: QuestionSet) -> str:
    """The white-box prompt: numbered code, Question1 (fill the assertion), the questions, the format."""
    questions = ["Question1: Fill the assertion statement."]
    questions += [f"Question{i}: {q.text(qset.call)}" for i, q in enumerate(qset.questions, 2)]
    parts = [
        "You are a programming expert. Analyse the Python code below and answer the questions by "
        "simulating its execution in your head; do not run any code.",
        "Here is the code:\n" + numbered_code(qset.code, qset.entry_point, qset.args),
        "Here are the questions (answer them in this order):\n" + "\n".join(questions),
        "How to answer:\n"
        "- Question1: the complete assertion statement, with ???? replaced by the value.\n"
        "- Next-line questions: the source text of the next line exactly as written, without its line "
        "number; -1 if the given line never runs.\n"
        "- Value-and-type questions: `value; type`, the value as a Python literal and the type one of "
        "int, float, bool, complex, str, list, tuple, dict, set, or object (e.g. `[1, 2]; list`).",
        "Format your response exactly as follows, one answer per line, nothing else in the answer:\n"
        "<reasoning>\nyour step-by-step reasoning\n</reasoning>\n<answer>\nanswer to Question1\n"
        "answer to Question2\n...\n</answer>",
    ]
    return "\n\n".join(parts)


# --- answers and scoring --------------------------------------------------------------------------


@dataclass(frozen=True)
class WhiteBoxScore:
    """How many questions were answered right; ``line_count_ok`` False when the answer lines don't
    line up with the questions (then nothing is marked correct)."""

    correct: int
    total: int
    line_count_ok: bool
    per_question: tuple[bool, ...] = ()

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


def score_answers(qset: QuestionSet, block: AnswerBlock) -> WhiteBoxScore:
    """Score the question answers of ``block`` (the assertion is the reward's business)."""
    total = len(qset.questions)
    if not block.ok or len(block.answers) != total:
        return WhiteBoxScore(0, total, False, (False,) * total)
    marks = tuple(
        check_path(a, q.answers) if q.kind == "path" else check_state(a, q.answers)
        for q, a in zip(qset.questions, block.answers, strict=True)
    )
    return WhiteBoxScore(sum(marks), total, True, marks)


def check_path(answer: str, acceptable: tuple[str, ...] | list[str]) -> bool:
    """Exact match after ``strip()`` against any acceptable next line.

    >>> check_path("  return ans", ["        return ans"])
    True
    >>> check_path("return ans  # done", ["        return ans"])
    False
    """
    return any(answer.strip() == gold.strip() for gold in acceptable)


def check_state(answer: str, acceptable: tuple[str, ...] | list[str]) -> bool:
    """``value; type``: the type name exact, the value equal as a Python literal.

    >>> check_state("[1, 2]; list", ["[1,2]; list"])
    True
    >>> check_state("(1, 2); list", ["[1, 2]; list"])
    False
    >>> check_state("abc; str", ["'abc'; str"])
    True
    >>> check_state("1.0; int", ["1; int"])
    True
    >>> check_state("1; float", ["1; int"])
    False
    """
    if ";" not in answer:
        return False
    value_text, type_text = (part.strip() for part in answer.rsplit(";", 1))
    for gold in acceptable:
        if ";" not in gold:
            continue
        gold_value_text, gold_type = (part.strip() for part in gold.rsplit(";", 1))
        if type_text != gold_type:
            continue
        gold_value = literal(gold_value_text)
        if gold_value is NOT_LITERAL:
            if value_text == gold_value_text:
                return True
            continue
        value = literal(value_text)
        if value is NOT_LITERAL and gold_type == "str":
            value = value_text  # an unquoted string, as ExecVerify accepts
        if value is not NOT_LITERAL and same_value(value, gold_value):
            return True
    return False
