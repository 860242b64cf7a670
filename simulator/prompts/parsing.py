"""Reading the model's replies, in one place: code blocks, the final answer (call and stdout forms,
with its offsets), the white-box ``<answer>`` block. Prompts, the pipeline, the
claim checker, the questions, the rewards and the evaluation all read replies through this module,
so they agree on what a reply says.

Replies arrive as vLLM returns them: the stop string is cut, so a simulation ends
``[ANSWER] assert f(...) == X`` with no ``[/ANSWER]`` and a stdin one has no ``</output>``. An answer
block whose closing tag is missing runs to the end of the reply.

Every parser returns data with an ``error`` string (None when it worked): a reply without a fence,
a truncated reply or plain garbage is a recorded parse failure, never an exception.

A NUL character (a model can write one; issue 51, item 14) is read as what it is: beside a fence it is
noise, as blanks are, so the block is still found; in the code it is a character Python source cannot
hold, and the parse failure says so and where, instead of "no code block" or "does not parse" (a lone
surrogate in the code likewise).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from simulator.source import CANNOT_HOLD, first_unsourceable, parse_python, unsourceable_name

OPENING = re.compile(r"[\s\x00]*```[\s\x00]*([\w+-]*)[\s\x00]*$")  # NUL beside a fence: noise
_BLANK_END = re.compile(r"[\s\x00]+$")
# a repair parse error, counted apart (``source.same_program`` says what counts as the same code)
REPEATED = "the reply repeats the attempted code (at most its layout, comments or test code changed)"
AnswerForm = Literal["call", "stdout"]

# Openers of an answer block and their closers; the last opener in the reply starts the answer.
_ANSWER_TAGS: tuple[tuple[str, str, AnswerForm], ...] = (
    ("[ANSWER]", "[/ANSWER]", "call"),
    ("[OUTPUT]", "[/OUTPUT]", "call"),
    ("<output>", "</output>", "stdout"),
)

# a line holding only one of the simulate prompts' tags: no program's output, the reply going on
_PROMPT_TAG_LINE = re.compile(
    r"^[ \t]*(?:\[/?(?:THOUGHT|ANSWER|PYTHON|OUTPUT)\]|</?(?:input|output)>)[ \t]*$", re.MULTILINE
)


@dataclass(frozen=True)
class CodeParse:
    code: str | None
    error: str | None = None


@dataclass(frozen=True)
class AnswerParse:
    predicted: str | None
    error: str | None = None


@dataclass(frozen=True)
class AnswerSpan:
    """Where a reply states its final answer: the block at ``text[start:end]`` (closing tag included
    when there is one) and the stated value at ``text[value_start:value_end]``. ``form`` says what the
    value is about: a call's value (the right side of ``assert f(...) == X``, or the block's first
    line) or a program's stdout (the block's body)."""

    form: AnswerForm
    start: int
    end: int
    value: str
    value_start: int
    value_end: int
    closed: bool = True


def final_text_start(text: str) -> int | None:
    """Where the part of a reply after its reasoning starts: after the last ``</think>``; None when a
    ``<think>`` was opened and never closed (the model ran out of tokens while thinking)."""
    if "</think>" in text:
        return text.rindex("</think>") + len("</think>")
    if "<think>" in text:
        return None
    return 0


def find_answer(text: str) -> AnswerSpan | None:
    """The reply's final answer block (the last one after any ``<think>`` part), or None."""
    begin = final_text_start(text)
    if begin is None:
        return None
    best: tuple[int, str, str, AnswerForm] | None = None
    for opener, closer, form in _ANSWER_TAGS:
        at = text.rfind(opener, begin)
        if at >= 0 and (best is None or at > best[0]):
            best = (at, opener, closer, form)
    if best is None:
        return None
    at, opener, closer, form = best
    body_start = at + len(opener)
    close = text.find(closer, body_start)
    if close < 0 and form == "call":  # a stray closing tag such as [/THOUGHT] ends the block too
        stray = text.find("[/", body_start)
        close = stray if stray >= 0 else -1
    elif close < 0:  # so does a line that is one of the prompt's tags: `-1\n[/THOUGHT]\n<input>...`
        stray_line = _PROMPT_TAG_LINE.search(text, body_start)
        close = stray_line.start() if stray_line else -1
    closed = close >= 0 and text.startswith(closer, close)
    body_end = close if close >= 0 else len(text)
    end = close + len(closer) if closed else body_end
    if form == "stdout":
        value_start = body_start + (1 if text.startswith("\n", body_start) else 0)
        value_start = min(value_start, body_end)
        return AnswerSpan(form, at, end, text[value_start:body_end], value_start, body_end, closed)
    value, a, b = _call_value(text, body_start, body_end)
    return AnswerSpan(form, at, end, value, a, b, closed)


def assert_answer(text: str) -> AnswerSpan | None:
    """Without answer tags: the last ``assert ... == X`` line, as a call-form answer."""
    begin = final_text_start(text) or 0
    found = None
    offset = 0
    for line in text.split("\n"):
        if offset >= begin and line.strip().startswith("assert") and "==" in line:
            found = (offset, offset + len(line))
        offset += len(line) + 1
    if found is None:
        return None
    value, a, b = _call_value(text, *found)
    return AnswerSpan("call", found[0], found[1], value, a, b, closed=False)


def _call_value(text: str, start: int, end: int) -> tuple[str, int, int]:
    """The value a call-form block states: the right side of ``assert call == X`` (X may span lines
    when it parses), else the text after the first ``==``, else the block's first line."""
    body = text[start:end]
    stripped = body.strip()
    lead = start + (body.index(stripped) if stripped else 0)
    if stripped.startswith("assert"):
        for candidate in (stripped, stripped.split("\n", 1)[0]):
            right = _assert_right_side(candidate)
            if right is not None:
                return candidate[right[0] : right[1]], lead + right[0], lead + right[1]
    if "==" in stripped:
        cut = stripped.index("==") + 2
        line = stripped[cut:].split("\n", 1)[0]
        rest = line.strip()
        value_start = cut + (line.index(rest) if rest else 0)
        return rest, lead + value_start, lead + value_start + len(rest)
    first = stripped.split("\n", 1)[0].strip()
    return first, lead, lead + len(first)


def _assert_right_side(source: str) -> tuple[int, int] | None:
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.Assert) or not isinstance(node.test, ast.Compare):
        return None
    if not isinstance(node.test.ops[0], ast.Eq):
        return None
    right = node.test.comparators[0]
    return (
        _offset_of(source, right.lineno, right.col_offset),
        _offset_of(source, right.end_lineno or right.lineno, right.end_col_offset or 0),
    )


def _offset_of(text: str, lineno: int, col: int) -> int:
    lines = text.split("\n")
    prefix = lines[lineno - 1].encode()[:col].decode(errors="ignore")  # ast columns count UTF-8 bytes
    return sum(len(x) + 1 for x in lines[: lineno - 1]) + len(prefix)


def extract_code(text: str, prefill: str = "") -> CodeParse:
    """The first Python (or untagged) fenced block after any ``<think>`` part (inside ``<answer>``
    when there is one). An unterminated block (a reply cut by the token budget, or one whose closing
    fence was the stop string, which vLLM leaves out) is used only when it still parses as Python.

    ``prefill`` is what the request put at the start of the assistant turn (the solve prompt's
    opening fence): the server continues it and returns only what follows, so the reply is read as
    ``prefill + text``, unless the reply opens a fence itself (a server that started a new turn)."""
    prefilled = bool(prefill) and not OPENING.match(text.lstrip("\n").split("\n", 1)[0])
    if prefilled:
        text = prefill + text
    begin = final_text_start(text)
    if begin is None:
        return CodeParse(None, "the reply never finished its <think> part")
    final = text[begin:]
    if "<answer>" in final:
        final = final.rsplit("<answer>", 1)[1].split("</answer>", 1)[0]
    for lang, body, closed in _fenced_blocks(final):
        if lang not in ("", "python", "py", "python3"):
            continue
        code = body.rstrip()
        if _no_statement(code):  # empty, or only a remark (e.g. an inline ```#note```): no program
            continue
        odd = first_unsourceable(code)
        if odd is not None:
            char, line = odd
            return CodeParse(None, f"the code holds {unsourceable_name(char)} on line {line}, {CANNOT_HOLD}")
        if not closed and not _parses(code):
            if prefilled:
                return CodeParse(None, "the reply (the inside of the prefilled code block) does not parse")
            return CodeParse(None, "the code block is unterminated (reply truncated?) and does not parse")
        return CodeParse(code + "\n")
    if not text.strip():
        return CodeParse(None, "empty reply")
    return CodeParse(None, "no fenced ```python code block in the reply")


def _fenced_blocks(text: str) -> Iterator[tuple[str, str, bool]]:
    """(language, body, closed) for each block opened by a line of just ```lang; inline fences such
    as ```#note``` are not blocks."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opening = OPENING.match(lines[i])
        i += 1
        if not opening:
            continue
        body: list[str] = []
        closed = False
        while i < len(lines):
            line = lines[i]
            i += 1
            end = _BLANK_END.sub("", line)
            if end.endswith("```"):
                rest = end[:-3]
                if rest.strip():
                    body.append(rest)
                closed = True
                break
            body.append(line)
        yield opening.group(1).lower(), "\n".join(body), closed


def call_answer(text: str) -> AnswerSpan | None:
    """A call-form reply's answer: the last answer block, else the last ``assert ... == X`` line."""
    span = find_answer(text)
    if span is not None:
        return span
    return assert_answer(text)


def parse_call_answer(text: str, call: str) -> AnswerParse:
    """CRUXEval style: the value after ``==`` in the last ``[ANSWER] ... [/ANSWER]`` (closing tag
    optional), or without tags the last ``assert ... == X`` line. The answer must be a Python
    expression (prose is a parse failure) other than ``??`` and must not repeat the call."""
    span = call_answer(text)
    if span is None:
        return AnswerParse(None, "no [ANSWER] ... [/ANSWER] block in the reply")
    answer = span.value.strip()
    problem = unusable_call_answer(answer, call)
    return AnswerParse(None, problem) if problem else AnswerParse(answer)


def unusable_call_answer(answer: str, call: str) -> str | None:
    """Why a stated call answer is no answer at all (None when it is one)."""
    if not answer:
        return "the [ANSWER] block has no value after =="
    if answer.replace(" ", "").strip("?") == "":
        return "the answer leaves the value as ??"
    if call and _squash(call) in _squash(answer):
        return "the answer repeats the call instead of giving its value"
    try:
        parse_python(answer, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return f"the answer is not a Python value: {answer[:80]!r}"
    return None


def parse_stdin_answer(text: str) -> AnswerParse:
    """The text inside ``<output> ... </output>`` (closing tag optional: it is the stop string)."""
    span = find_answer(text)
    if span is None or span.form != "stdout":
        return AnswerParse(None, "no <output> ... </output> block in the reply")
    return AnswerParse(normal_stdout(span.value))


def normal_stdout(body: str) -> str:
    """A stated stdout as a program would print it: one trailing newline, or empty."""
    return body.rstrip() + "\n" if body.strip() else ""


def predicted_output(text: str) -> str | None:
    """The predicted output of a reply in either form, as stated (the ``<output>`` body raw, the
    value after ``==`` of an ``[ANSWER]`` assertion); None when the reply states none."""
    span = find_answer(text)
    return None if span is None else span.value


def eval_answer(text: str) -> str:
    """The evaluation's reading of a call answer: the answer's value, else (no tags, no assert line)
    the reply's last non-empty line, so that free text is scored, and fails, as CRUXEval does."""
    span = call_answer(text)
    if span is not None:
        return span.value.strip().strip("`").strip()
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def answer_found(text: str) -> bool:
    """Whether a reply states a call answer at all (a value other than the ``??`` placeholder)."""
    span = call_answer(text)
    return span is not None and span.value.strip().replace(" ", "").strip("?") != ""


@dataclass(frozen=True)
class AnswerBlock:
    """The parsed ``<answer>`` block: ``ok`` False (with ``error``) when there is none to score."""

    ok: bool
    assertion: str = ""
    answers: tuple[str, ...] = ()
    error: str = ""


def parse_answer_block(text: Any) -> AnswerBlock:
    """The lines of the last ``<answer>...</answer>`` (after ``</think>`` when present): the first is the
    assertion, the rest answer the questions in order. Blank lines are ignored. Never raises.

    >>> parse_answer_block("<reasoning>x</reasoning><answer>\\nassert f(1) == 2\\n3; int\\n</answer>")
    AnswerBlock(ok=True, assertion='assert f(1) == 2', answers=('3; int',), error='')
    >>> parse_answer_block("no tags").error
    'no <answer>...</answer> block'
    """
    if not isinstance(text, str):
        return AnswerBlock(False, error=f"expected text, got {type(text).__name__}")
    begin = final_text_start(text)
    text = text[begin:] if begin is not None else text
    start = text.rfind("<answer>")
    end = text.find("</answer>", start + 1) if start >= 0 else -1
    if start < 0 or end < 0:
        return AnswerBlock(False, error="no <answer>...</answer> block")
    lines = [line.strip() for line in text[start + len("<answer>") : end].split("\n")]
    lines = [line for line in lines if line]
    if not lines:
        return AnswerBlock(False, error="the <answer> block is empty")
    return AnswerBlock(True, assertion=lines[0], answers=tuple(lines[1:]))


def _no_statement(code: str) -> bool:
    """Whether a block body holds nothing but blank lines and comments (backticks aside)."""
    return all(not line.strip() or line.strip().startswith("#") for line in code.strip("`").splitlines())


def _parses(code: str) -> bool:
    try:
        parse_python(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _squash(text: str) -> str:
    return "".join(text.split())
