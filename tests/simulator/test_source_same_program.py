"""``same_program``: a repair that changes only layout, comments or (for a call problem) the test code
after the function is no fix; the cases are the default model's own repair replies (MBPP dev, guided
repair sampled 4 times, 2026-12-03)."""

from __future__ import annotations

import pytest

from simulator.source import renamed_variables, same_program

ATTEMPT = "def find_sum(lst):\n    return sum(lst)\n"


@pytest.mark.parametrize(
    "fix",
    [
        # MBPP 777: the attempt again with a call and an assert holding the public test's expected value
        ATTEMPT
        + "\nfind_sum([1, 2, 3, 1, 1, 4, 5, 6])\nassert find_sum(find_sum([1, 2, 3, 1, 1, 4, 5, 6])) == 21\n",
        ATTEMPT + "\nexpected = 21\nprint(find_sum([1, 2]) == expected)\n",
        ATTEMPT + '\nif __name__ == "__main__":\n    print(find_sum([1]))\n',
        "# sums the list\ndef find_sum(lst):\n\n    return sum(lst)  # all of it\n",
        ATTEMPT + '\n"""A docstring at the end."""\n',
    ],
)
def test_test_code_layout_and_comments_do_not_make_a_call_program_another(fix: str) -> None:
    assert same_program(fix, ATTEMPT, "call")


@pytest.mark.parametrize(
    "fix",
    [
        "def find_sum(lst):\n    return sum(set(lst))\n",  # the function changed
        "import math\n" + ATTEMPT,  # an import can change what the function sees
        ATTEMPT + "\nfind_sum = len\n",  # the name now holds another function
        ATTEMPT + "\nfind_sum = 3\n",  # ... or a number
        "find_sum = lambda lst: 0\n",  # the function is an assignment
        "LIMIT = 3\ndef find_sum(lst):\n    return sum(lst[:LIMIT])\n",  # a global the function reads
        ATTEMPT + "\ncache = {}\ncache.update(a=1)\n",  # a method call may change state
    ],
)
def test_a_change_a_call_can_see_makes_another_program(fix: str) -> None:
    assert not same_program(fix, ATTEMPT, "call")


def test_the_prints_of_a_stdin_program_are_its_answer() -> None:
    assert not same_program("print(1)\n", "print(2)\n", "stdin")
    assert same_program("print(1)  # one\n", "print( 1 )\n", "stdin")
    assert not same_program("x = 1\nprint(2)\n", "print(2)\n", "stdin")


def test_programs_that_do_not_parse_are_compared_as_text() -> None:
    assert same_program("def f(:\n", "def f(:\n\n", "call")
    assert not same_program("def f(:\n", "def g(:\n", "call")


def test_agreement_counts_each_program_among_all_itself_included() -> None:
    from simulator.source import agreement_counts

    square = "def f(x):\n    return x * x\n"
    square_tested = "def f(x):\n    return x * x\n\nassert f(3) == 9\n"  # the same program
    double = "def f(x):\n    return 2 * x\n"
    assert agreement_counts([square, double, square_tested], "call") == [2, 1, 2]
    assert agreement_counts([], "call") == []


def test_a_rename_is_found_and_nothing_else_passes_for_one() -> None:
    before = "def add_one(x):\n    total = x + 1\n    return total\n"
    assert renamed_variables(before, "def add_one(y):\n    s = y + 1  # one more\n    return s\n") == {
        "x": "y",
        "total": "s",
    }
    assert renamed_variables(before, before) is None  # no change
    assert renamed_variables(before, before.replace("+ 1", "+ 2")) is None  # a real change
    assert renamed_variables(before, before.replace("add_one", "plus_one")) is None  # the function's name
    assert renamed_variables("print(len([1]))", "print(sum([1]))") is None  # a builtin swapped, not renamed
    assert renamed_variables("a = 1\nb = 2\nc = a + b", "a = 1\na = 2\nc = a + a") is None  # not one for one
    assert renamed_variables("def f(:", "def g(:") is None
