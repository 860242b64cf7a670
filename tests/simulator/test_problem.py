"""``simulator.problem``: the code a judge's editor opens with for a problem."""

from __future__ import annotations

import pytest

from simulator.problem import Problem
from simulator.problem import TestCase as Case


def _call(statement: str, *inputs: str, entry: str = "count_vowels") -> Problem:
    return Problem("t", statement, "call", tuple(Case(i, "0") for i in inputs), entry_point=entry)


@pytest.mark.parametrize(
    ("problem", "starter"),
    [
        # the parameters as the statement names them
        (
            _call("Write a function count_vowels(s) that counts.", "'hello'"),
            "def count_vowels(s):\n    pass\n",
        ),
        (_call("Write pick(xs, k).", "[1, 2], 3", entry="pick"), "def pick(xs, k):\n    pass\n"),
        # an MBPP statement writes a call with values: a, b, ... counted from the first test
        (_call("assert pick([1, 2], 3) == 1", "[1, 2], 3", entry="pick"), "def pick(a, b):\n    pass\n"),
        # names that disagree with the tests' argument count are not trusted
        (_call("Write pick(xs).", "[1, 2], 3", entry="pick"), "def pick(a, b):\n    pass\n"),
        (_call("No call written.", "x=1", entry="f"), "def f(a):\n    pass\n"),  # a keyword counts
        (_call("Nothing.", entry="f"), "def f():\n    pass\n"),
        (Problem("t", "Print it.", "stdin", (Case("1", "1"),)), ""),  # a script has no signature
    ],
)
def test_starter_code_is_the_entry_points_signature(problem: Problem, starter: str) -> None:
    assert problem.starter_code() == starter
    if starter:
        compile(starter, "<starter>", "exec")  # it runs as it is: returns None
