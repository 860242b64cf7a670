"""What a call problem's test calls: ``entry_point(<input>)``, exactly as the judge runs it
(``simulator.pipeline.executor.program_for``), and the one slip the editor warns of: an input that is a
single tuple (``([5, 7],)``), so that the function gets one tuple instead of its arguments. The editor's
script (static/js/problem-form.js) says the same words live, as the user types."""

from __future__ import annotations

import ast

from simulator.execution.program import call_from_input
from simulator.source import parse_python

UNNAMED = "<entry point>"  # what the call shows while the entry point is blank


def call_of(entry_point: str | None, arguments: str) -> str:
    """The call a test with ``arguments`` (its input) makes."""
    return call_from_input(entry_point or UNNAMED, arguments)


def tuple_warning(arguments: str) -> str:
    """Why the test's input is most likely a slip, '' when it is not: the input is one tuple, the only
    argument the function then gets. A tuple can be what the function takes, so this is a warning, never
    an error."""
    source = f"f({arguments})"
    try:
        call = parse_python(source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""  # the form says what is wrong with it
    if not isinstance(call, ast.Call) or len(call.args) != 1 or call.keywords:
        return ""
    only = call.args[0]
    if not isinstance(only, ast.Tuple):  # an argument that is a tuple has its parentheses: (1, 2)
        return ""
    items = [ast.get_source_segment(source, item) or "" for item in only.elts]
    return warning_for(items)


def warning_for(items: list[str]) -> str:
    """The warning for an input that is one tuple of ``items`` (their source)."""
    keep = "; keep the tuple only if the function takes one."
    if not items:
        return (
            "This test passes one argument, the empty tuple (). For a function of no arguments, leave "
            "the input blank."
        )
    if len(items) == 1:
        item = items[0]
        return (
            f"This test passes one argument, a tuple: the function gets ({item},), not {item}. "
            f"To pass {item}, write {item}{keep}"
        )
    listed = ", ".join(items)
    return (
        f"This test passes one argument, a tuple of {len(items)} values. To pass them as {len(items)} "
        f"arguments, write {listed}{keep}"
    )
