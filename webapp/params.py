"""Numbers read from a request (a query string, a posted form), in one place and with bounds.

``str.isdigit`` is no test for ``int``: it is True for ``²`` and for other scripts' digits, which
``int`` refuses or reads (``int("١٢") == 12``); ``int`` also takes ``1_000`` and surrounding
whitespace, and raises on more than 4,300 digits; and a number that converts may still not fit the
database column it is compared with (PostgreSQL's ``bigint``). Each of these made a page answer 500
(issue 51, item 13). Every view reads its numbers here instead: ASCII digits only, with an optional
sign where a negative number means something, refused by length before any conversion, and checked
against the bounds the caller gives. A refused value is a ``BadNumber`` whose message says what was
expected, for the view to show as a form error or a message; a value that should pick a row
(``object_id``) and does not is simply None, which the caller treats as naming nothing, as it treats
a missing one.
"""

from __future__ import annotations

import re
from typing import Any

_DIGITS = re.compile(r"[0-9]+", re.ASCII)
BIGINT_MAX = 2**63 - 1  # a BigAutoField's largest key (PostgreSQL's bigint; SQLite's integer)


class BadNumber(ValueError):
    """A request's value that is not a whole number within the bounds; the message says which were
    expected (``"claim minutes must be a whole number from 1 to 10080"``)."""


def bounded_int(
    value: Any, *, low: int, high: int, default: int | None = None, name: str = "the number"
) -> int | None:
    """``value`` (a string from ``request.GET``/``POST``, or None when absent) as an int from ``low`` to
    ``high``; ``default`` when it is absent or blank. Raises ``BadNumber`` naming ``name`` and the
    bounds for anything else: not ASCII digits (a leading ``-`` or ``+`` is allowed only when ``low``
    is negative), longer than the bounds' own digits (checked before converting, so no string makes
    ``int`` work), or out of range."""
    if value is None:
        return default
    text = str(value).strip()
    if not text:
        return default
    refused = BadNumber(f"{name} must be a whole number from {low} to {high}")
    digits = text[1:] if text[0] in "+-" and low < 0 else text
    longest = max(len(str(abs(low))), len(str(abs(high))))
    if len(digits) > longest or not _DIGITS.fullmatch(digits):
        raise refused
    number = int(text)
    if not low <= number <= high:
        raise refused
    return number


def object_id(value: Any) -> int | None:
    """A primary key named by a request (a filter, a picked row): None when ``value`` is absent or
    cannot be one (not digits, zero, past ``BIGINT_MAX``), which callers read as "no such row"."""
    try:
        return bounded_int(value, low=1, high=BIGINT_MAX)
    except BadNumber:
        return None
