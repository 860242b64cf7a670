"""Judging outputs: stdout token by token with a float tolerance, and Python values as literals.

One module so that the output-prediction reward, the Code Jam judge, the pipeline's "simulated
output matches expected output", the white-box questions and the NLEX checker all agree on what a
match is.

Values (``literal``, ``same_value``): source text read with ``ast.literal_eval`` (never ``eval``;
hostile text such as ``[``x100000 is "not a literal", never an exception) and compared with ``==``,
as CRUXEval's ``assert gold == answer`` does; ``strict_bool`` also tells ``True`` from ``1`` (the
checker's claims about variables).

Rules (the usual competitive-programming checker):

- both texts are split on whitespace; the token counts must be equal;
- two tokens match when they are the same string, or when both are numbers, at least one of them is
  not an integer literal (it has a '.', an exponent, ...), and they differ by at most
  ``tolerance * max(1, |expected|)`` (absolute or relative error);
- integer tokens are compared exactly: ``1000001`` never matches ``1000000``, whatever the tolerance
  (Code Jam archives state a float tolerance even for integer problems).
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

DEFAULT_TOLERANCE = 1e-5
_INTEGER = re.compile(r"[+-]?\d+")


def outputs_match(actual: str, expected: str, tolerance: float = DEFAULT_TOLERANCE) -> bool:
    """Whether ``actual`` stdout matches ``expected`` token by token (floats within ``tolerance``).

    >>> outputs_match("Case #1: 0.333333\\n", "Case #1: 0.3333333333", 1e-5)
    True
    >>> outputs_match("1 2 3", "1 2  3\\n", 0.0)
    True
    >>> outputs_match("1000001", "1000000", 1e-5)
    False
    >>> outputs_match("1.5", "1.6", 1e-5)
    False
    """
    actual_tokens = actual.split()
    expected_tokens = expected.split()
    if len(actual_tokens) != len(expected_tokens):
        return False
    return all(_tokens_match(a, e, tolerance) for a, e in zip(actual_tokens, expected_tokens, strict=True))


def _tokens_match(actual: str, expected: str, tolerance: float) -> bool:
    if actual == expected:
        return True
    if _INTEGER.fullmatch(actual) and _INTEGER.fullmatch(expected):
        return False
    a, e = _as_float(actual), _as_float(expected)
    if a is None or e is None or not (math.isfinite(a) and math.isfinite(e)):
        return False
    return abs(a - e) <= tolerance * max(1.0, abs(e))


def _as_float(token: str) -> float | None:
    if "_" in token:  # float() accepts "1_0"; a judge must not
        return None
    try:
        return float(token)
    except ValueError:
        return None


NOT_LITERAL: Any = object()


def literal(text: str | ast.expr) -> Any:
    """The Python value written as ``text`` (surrounding whitespace ignored) or as an already parsed
    expression, else ``NOT_LITERAL``."""
    try:
        return ast.literal_eval(text.strip() if isinstance(text, str) else text)
    except Exception:  # ValueError, SyntaxError, TypeError, RecursionError, MemoryError on hostile text
        return NOT_LITERAL


def same_value(a: Any, b: Any, *, strict_bool: bool = False) -> bool:
    """``a == b``, False when ``==`` itself fails; with ``strict_bool`` a bool equals only a bool."""
    try:
        equal = bool(a == b)
    except Exception:
        return False
    return equal and (not strict_bool or isinstance(a, bool) == isinstance(b, bool))
