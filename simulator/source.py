"""Parsing what users give (Python source, JSON) so that hostile depth is a malformed input, not a crash.

CPython's parser and ``json`` answer input nested too deeply with ``RecursionError`` (``1+`` x 5000,
``[`` x 100000 in JSON) or ``MemoryError`` (``-`` x 100000), which nothing expects from a parse and which
reached users as tracebacks and 500s. These wrappers turn them into the errors a malformed input already
gives (``SyntaxError``, ``json.JSONDecodeError``), with a message in the user's terms, so that every
place that validates input (the problem format, the benchmark converters, ``Program.problems``, the
command line, the web forms through them) reports it at the field like any other mistake.
"""

from __future__ import annotations

import ast
import json
import threading
from typing import Any, Literal, overload

TOO_DEEP = "too deeply nested or too long for Python's parser"
TOO_DEEP_JSON = "too deeply nested"
# CPython 3.11's AST conversion keeps its recursion depth in state shared by all threads, so two threads
# parsing at once can fail with "SystemError: AST constructor recursion depth mismatch" (CPython
# gh-106905; the sandbox pool checks programs from a thread pool). Parsing is quick; one at a time.
_PARSE_LOCK = threading.Lock()


@overload
def parse_python(source: str, *, mode: Literal["exec"] = "exec", filename: str = "<input>") -> ast.Module: ...
@overload
def parse_python(source: str, *, mode: Literal["eval"], filename: str = "<input>") -> ast.Expression: ...
def parse_python(source: str, *, mode: str = "exec", filename: str = "<input>") -> ast.AST:
    """``ast.parse``; input too deeply nested for the parser is a ``SyntaxError`` whose ``msg`` says so."""
    try:
        with _PARSE_LOCK:
            return ast.parse(source, filename=filename, mode=mode)
    except (RecursionError, MemoryError):
        raise SyntaxError(TOO_DEEP, (filename, 1, 0, None)) from None


def unparse(node: ast.AST) -> str:
    """``ast.unparse``; a tree too deep to print again (it parsed, just) is a ``SyntaxError`` too."""
    try:
        return ast.unparse(node)
    except (RecursionError, MemoryError):
        raise SyntaxError(TOO_DEEP) from None


def load_json(text: str | bytes) -> Any:
    """``json.loads``; a document nested too deeply is a ``json.JSONDecodeError`` (a ``ValueError``)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(TOO_DEEP_JSON, text if isinstance(text, str) else "", 0) from None


_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_BRACKET_NAMES = {"(": "parenthesis (", "[": "list", "{": "dict or set"}


def explain_syntax_error(source: str, exc: SyntaxError, *, column_shift: int = 0) -> str:
    """Why ``source`` does not parse, in the user's terms and with the position in ``source``.

    Brackets first ("the list opened with [ at column 1 is never closed", "the ) at column 5 does
    not close the [ opened at column 1"), else Python's message and where it points. ``exc`` came from
    parsing ``source`` wrapped in ``column_shift`` characters of prefix on its first line (``f(`` for
    an argument list), which the position given leaves out.
    """
    if exc.msg == TOO_DEEP:
        return TOO_DEEP
    multiline = "\n" in source.strip()

    def where(line: int, column: int) -> str:
        return f"line {line}, column {column}" if multiline else f"column {column}"

    stack: list[tuple[str, int, int]] = []
    quote: str | None = None
    for number, text in enumerate(source.split("\n"), start=1):
        column = 0
        while column < len(text):
            char = text[column]
            if quote:  # inside a string: only its closing quote (not escaped) matters
                if char == "\\":
                    column += 1
                elif text.startswith(quote, column):
                    column += len(quote) - 1
                    quote = None
            elif char == "#":
                break
            elif char in "'\"":
                quote = char * 3 if text.startswith(char * 3, column) else char
                column += len(quote) - 1
                start = (number, column + 1)
            elif char in _OPENERS:
                stack.append((char, number, column + 1))
            elif char in _CLOSERS:
                if not stack:
                    return f"the {char} at {where(number, column + 1)} closes nothing"
                opener, line, col = stack.pop()
                if _OPENERS[opener] != char:
                    return (
                        f"the {char} at {where(number, column + 1)} does not close the {opener} "
                        f"opened at {where(line, col)} (close it with {_OPENERS[opener]})"
                    )
            column += 1
        if quote and len(quote) == 1:
            return f"the string opened at {where(*start)} is never closed (add its closing {quote})"
    if quote:
        return f"the string opened at {where(*start)} is never closed (add its closing {quote})"
    if stack:
        opener, line, col = stack[-1]
        name = _BRACKET_NAMES[opener]
        opened = f"the {name} opened" if opener == "(" else f"the {name} opened with {opener}"
        return f"{opened} at {where(line, col)} is never closed (add its {_OPENERS[opener]})"
    line, column = exc.lineno or 1, exc.offset or 1
    if line == 1:
        column = max(1, column - column_shift)
    return f"{exc.msg} at {where(line, column)}"
