"""Values Python cannot take as they are (issue 51, item 14), read where the core reads input: NUL and
lone surrogates in Python source are a ``SyntaxError`` that says so (not a ``ValueError`` or a
``UnicodeEncodeError`` that only some callers caught), a JSON integer past ``int``'s 4,300 digits reads
as JavaScript reads it (a float: infinity), and a problem's ``float_tolerance`` must be a finite number
in a sane range."""

from __future__ import annotations

import math

import pytest

from simulator.problem import Problem
from simulator.source import explain_syntax_error, load_json, parse_python

HUGE = "1" * 5000


@pytest.mark.parametrize(
    ("source", "message", "line", "column"),
    [
        ("x = 1\ny = 'a\x00'\n", "it holds a NUL character (\\x00), which Python source cannot hold", 2, 7),
        ("x = '\udc80'", "it holds a lone surrogate (\\udc80), which Python source cannot hold", 1, 6),
    ],
)
def test_nul_and_lone_surrogates_in_source_are_syntax_errors_that_say_so(source, message, line, column):
    with pytest.raises(SyntaxError) as error:
        parse_python(source)
    assert error.value.msg.startswith(message)
    assert (error.value.lineno, error.value.offset) == (line, column)
    assert explain_syntax_error(source, error.value).startswith(message)
    assert f"column {column}" in explain_syntax_error(source, error.value)  # and the line, when several


def test_json_integers_too_long_for_int_read_as_infinity():
    assert load_json(f"[{HUGE}, -{HUGE}, 12]") == [math.inf, -math.inf, 12]
    assert isinstance(load_json("12"), int)


def _problem(**fields):
    return {"title": "t", "statement": "s", "tests": [{"input": "", "output": ""}], **fields}


@pytest.mark.parametrize("tolerance", [math.inf, -math.inf, math.nan, 1e7, -0.5, True, "0.1"])
def test_a_float_tolerance_must_be_a_finite_number_in_range(tolerance):
    problem, errors = Problem.validate(_problem(float_tolerance=tolerance))
    assert problem is None
    assert [(e.field, e.message) for e in errors] == [
        ("float_tolerance", "must be a finite number from 0 to 1,000,000")
    ]


@pytest.mark.parametrize("tolerance", [0, 1e-6, 0.5, 1_000_000])
def test_a_sane_float_tolerance_is_kept(tolerance):
    assert Problem.from_dict(_problem(float_tolerance=tolerance)).float_tolerance == tolerance


def test_a_lone_surrogate_in_a_call_test_is_an_error_at_its_field():
    data = _problem(kind="call", entry_point="f", tests=[{"input": "'\udc80'", "output": "1"}])
    _, errors = Problem.validate(data)
    assert [e.field for e in errors] == ["tests[0].input"]
    assert "it holds a lone surrogate (\\udc80)" in errors[0].message
