"""Reading the model's replies: code blocks, predicted outputs, repair decisions.

Every parser returns data with an ``error`` string (None when it worked): a reply without a fence,
a truncated reply or plain garbage is a recorded parse failure, never an exception.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

OPENING = re.compile(r"\s*```\s*([\w+-]*)\s*$")
SUBMIT = "#SUBMIT"


@dataclass(frozen=True)
class CodeParse:
    code: str | None
    error: str | None = None


@dataclass(frozen=True)
class AnswerParse:
    predicted: str | None
    error: str | None = None


@dataclass(frozen=True)
class RepairParse:
    submitted: bool
    code: str | None = None
    error: str | None = None


def extract_code(text: str) -> CodeParse:
    """The first Python (or untagged) fenced block. An unterminated block (a reply cut by the token
    budget) is used only when it still parses as Python."""
    for lang, body, closed in _fenced_blocks(text):
        if lang not in ("", "python", "py", "python3"):
            continue
        code = body.rstrip()
        if not code.strip() or code.strip() == SUBMIT:
            continue
        if not closed and not _parses(code):
            return CodeParse(None, "the code block is unterminated (reply truncated?) and does not parse")
        return CodeParse(code + "\n")
    if not text.strip():
        return CodeParse(None, "empty reply")
    return CodeParse(None, "no fenced ```python code block in the reply")


def _fenced_blocks(text: str) -> Iterator[tuple[str, str, bool]]:
    """(language, body, closed) for each block opened by a line of just ```lang; inline fences such
    as ```#SUBMIT``` are not blocks."""
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
            if line.rstrip().endswith("```"):
                rest = line.rstrip()[:-3]
                if rest.strip():
                    body.append(rest)
                closed = True
                break
            body.append(line)
        yield opening.group(1).lower(), "\n".join(body), closed


def parse_call_answer(text: str, call: str) -> AnswerParse:
    """CRUXEval style: the text after the first ``==`` inside the last ``[ANSWER] ... [/ANSWER]`` (the
    closing tag may be missing: it is the stop string). Without tags, the last ``assert ... == X``
    line. The answer must be a Python expression (prose is a parse failure) other than ``??`` and
    must not repeat the call."""
    start = text.rfind("[ANSWER]")
    if start >= 0:
        body = text[start + len("[ANSWER]") :]
    else:
        lines = [ln for ln in text.splitlines() if ln.strip().startswith("assert") and "==" in ln]
        if not lines:
            return AnswerParse(None, "no [ANSWER] ... [/ANSWER] block in the reply")
        body = lines[-1]
    body = body.split("[/", 1)[0]  # [/ANSWER], or a stray closing tag
    answer = body.split("==", 1)[1].strip() if "==" in body else body.strip()
    if not answer:
        return AnswerParse(None, "the [ANSWER] block has no value after ==")
    if answer.replace(" ", "") == "??":
        return AnswerParse(None, "the answer leaves the value as ??")
    if _squash(call) in _squash(answer):
        return AnswerParse(None, "the answer repeats the call instead of giving its value")
    try:
        ast.parse(answer, mode="eval")
    except (SyntaxError, ValueError):
        return AnswerParse(None, f"the answer is not a Python value: {answer[:80]!r}")
    return AnswerParse(answer)


def parse_stdin_answer(text: str) -> AnswerParse:
    """The text inside ``<output> ... </output>`` (closing tag optional: it is the stop string)."""
    start = text.find("<output>")
    if start < 0:
        return AnswerParse(None, "no <output> ... </output> block in the reply")
    body = text[start + len("<output>") :].split("</output>", 1)[0]
    return AnswerParse(body.removeprefix("\n").rstrip() + "\n" if body.strip() else "")


def parse_repair(text: str, current_code: str) -> RepairParse:
    """``#SUBMIT`` keeps the program; a code block that differs from it is a fix (even when the
    reply also says ``#SUBMIT``); anything else is a parse failure."""
    parsed = extract_code(text)
    if parsed.code is not None and parsed.code.strip() != current_code.strip():
        return RepairParse(submitted=False, code=parsed.code)
    if SUBMIT in text:
        return RepairParse(submitted=True)
    if parsed.code is not None:  # repeated the same code without #SUBMIT: nothing changed
        return RepairParse(submitted=False, error="the reply repeats the attempted code without #SUBMIT")
    return RepairParse(submitted=False, error=f"neither #SUBMIT nor a corrected program ({parsed.error})")


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _squash(text: str) -> str:
    return "".join(text.split())
