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
from typing import Any

TOO_DEEP = "too deeply nested or too long for Python's parser"
TOO_DEEP_JSON = "too deeply nested"


def parse_python(source: str, *, mode: str = "exec", filename: str = "<input>") -> ast.AST:
    """``ast.parse``; input too deeply nested for the parser is a ``SyntaxError`` whose ``msg`` says so."""
    try:
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
