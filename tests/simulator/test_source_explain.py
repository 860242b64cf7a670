"""explain_syntax_error: why a literal or an argument list does not parse, in the user's terms."""

from __future__ import annotations

import pytest

from simulator.problem import Problem
from simulator.source import TOO_DEEP, explain_syntax_error, parse_python


def _explain(source: str, *, call: bool = False) -> str:
    try:
        parse_python(f"f({source})" if call else source, mode="eval")
    except SyntaxError as exc:
        return explain_syntax_error(source, exc, column_shift=2 if call else 0)
    raise AssertionError(f"{source!r} parsed")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("[1, 3", "the list opened with [ at column 1 is never closed (add its ])"),  # issue 13's example
        ("[1, 3)", "the ) at column 6 does not close the [ opened at column 1 (close it with ])"),
        ("(1, 2", "the parenthesis ( opened at column 1 is never closed (add its ))"),
        ("{'a': 1", "the dict or set opened with { at column 1 is never closed (add its })"),
        ("1]", "the ] at column 2 closes nothing"),
        ("'abc", "the string opened at column 1 is never closed (add its closing ')"),
        ("'[', [2", "the list opened with [ at column 6 is never closed (add its ])"),  # brackets in strings
        ("[1,\n 2", "the list opened with [ at line 1, column 1 is never closed (add its ])"),
    ],
)
def test_it_explains_brackets_and_strings(source, message):
    assert _explain(source) == message


def test_it_gives_the_position_in_the_users_text_not_in_the_wrapper():
    assert _explain("1,, 2", call=True).endswith("at column 3")


def test_it_keeps_the_too_deep_message():
    assert _explain("[" * 100000) in (
        TOO_DEEP,
        "the list opened with [ at column 100000 is never closed (add its ])",
    )


def test_the_problem_format_reports_every_error_with_the_explanation():
    data = {
        "title": "t",
        "statement": "s",
        "kind": "call",
        "entry_point": "not valid",
        "tests": [{"input": "1", "output": "[1, 3"}, {"input": "1,, 2", "output": "2", "public": False}],
    }
    problem, errors = Problem.validate(data)
    assert problem is None
    assert [(e.field, e.message) for e in errors] == [
        ("entry_point", "call problems need the name of the function to call"),
        (
            "tests[0].output",
            "is not a Python literal: the list opened with [ at column 1 is never closed (add its ])",
        ),
        ("tests[1].input", errors[2].message),
    ]
    assert (
        errors[2].message.startswith("is not an argument list: invalid syntax")
        and "column 3" in errors[2].message
    )
    with pytest.raises(ValueError, match="entry_point: call problems need"):
        Problem.from_dict(data)  # the CLI's first error is unchanged


def test_parsing_a_program_does_not_raise_its_warnings_as_ours() -> None:
    import warnings

    from simulator.source import parse_python

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would fail the test
        tree = parse_python("pattern = '\\.'\nassert (1, 2)\n")  # invalid escape; assert on a tuple
    assert len(tree.body) == 2
