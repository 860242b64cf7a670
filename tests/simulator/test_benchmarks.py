"""MBPP records become call problems; an assert the problem format cannot state is skipped, not misread."""

from __future__ import annotations

import pytest

from simulator.benchmarks import from_codejam, from_mbpp
from simulator.problem import ProblemError


def record(*asserts: str) -> dict[str, object]:
    return {"task_id": 2, "prompt": "Find the shared elements.", "test_list": list(asserts)}


def test_the_called_function_is_the_entry_point_and_the_first_assert_is_public() -> None:
    problem = from_mbpp(record("assert shared([1, 2], [2]) == [2]", "assert shared([], []) == []"))
    assert problem.entry_point == "shared"
    assert [(t.input, t.output, t.public) for t in problem.tests] == [
        ("[1, 2], [2]", "[2]", True),
        ("[], []", "[]", False),
    ]


def test_a_builtin_around_the_call_is_not_taken_for_the_function() -> None:
    # `set(f(x)) == set(y)` compares as sets: `set` is not the function asked for, and f's value is not y
    wrapped, plain = "assert set(shared([1, 2], [2])) == set([2])", "assert shared([3], [3]) == [3]"
    problem = from_mbpp(record(wrapped, plain))
    assert problem.entry_point == "shared"
    assert [(t.input, t.output) for t in problem.tests] == [("[3], [3]", "[3]")]
    assert problem.extra["skipped_asserts"] == 1


def test_a_record_whose_every_assert_wraps_the_call_is_a_clear_error() -> None:
    with pytest.raises(ProblemError, match="no assert of the form"):
        from_mbpp(record("assert set(shared([1, 2], [2])) == set([2])"))


def test_the_title_says_what_the_task_asks_cut_at_a_word() -> None:
    problem = from_mbpp(
        {
            **record("assert shared([1], [1]) == [1]"),
            "prompt": "Write a function to find the shared elements.",
        }
    )
    assert problem.title == "MBPP 2: find the shared elements"
    long = "Write a python function to " + "count the words " * 10
    title = from_mbpp({**record("assert shared([1], [1]) == [1]"), "prompt": long}).title
    assert title.startswith("MBPP 2: count the words count") and title.endswith(" count…") and len(title) < 90


def test_a_code_jam_statement_is_marked_plain_text() -> None:
    """Code Jam's statement_text is plain text ("5*2 ≤ 20"): the app shows it as written, not as Markdown,
    and the model reads it as it is."""
    record = {
        "id": "codejam/2011/x", "name": "Royale", "year": 2011, "round": "world_finals",
        "statement_text": "Since 5*2 ≤ 20, bet 5*2.",
        "public_tests": [{"input": "1\n", "output": "Case #1: 1\n"}], "private_tests": [],
    }  # fmt: skip
    problem = from_codejam(record)
    assert problem.statement == "Since 5*2 ≤ 20, bet 5*2."
    assert problem.extra["statement_format"] == "text" and problem.extra["benchmark"] == "codejam"


def test_a_code_jam_statement_loses_the_sites_copy_button_labels() -> None:
    """Every scraped sample carries the site's button labels as lines of their own; they reached the
    solve prompt and the page. A word in a sentence stays."""
    text = (
        "Sample\n\nSample Input\n\n              save_alt\n\n            content_copy\n\n"
        "              Copied!\n\n2\n1 2\n\nSample Output\n\n  save_alt\n  content_copy\n  Copied!\n\n"
        "Case #1: 3\n\nPress content_copy to copy."
    )
    record = {"name": "Sum", "statement_text": text, "public_tests": [{"input": "1\n1 2\n", "output": "3\n"}]}
    assert from_codejam(record).statement == (
        "Sample\n\nSample Input\n\n2\n1 2\n\nSample Output\n\nCase #1: 3\n\nPress content_copy to copy."
    )


def test_a_code_jam_title_names_the_contest_as_its_record_does_and_the_statement_does_not_repeat_it() -> None:
    text = "Code Jam 2008 - AMER Semifinal\nCode Sequence\nProblem\n\n  You are trying to compute S."
    record = {
        "name": "Code Sequence", "year": 2008, "round": "amer_semifinal",
        "source": "Code Jam 2008 - AMER Semifinal", "statement_text": text,
        "public_tests": [{"input": "1\n", "output": "Case #1: 1\n"}],
    }  # fmt: skip
    problem = from_codejam(record)
    assert problem.title == "Code Sequence (Code Jam 2008, AMER Semifinal)"
    assert problem.statement == "Problem\n\n  You are trying to compute S."
    bare = from_codejam({**record, "source": None, "statement_text": "Code Sequence\nProblem"})
    assert (
        bare.title == "Code Sequence (Code Jam 2008 amer_semifinal)"
        and bare.statement == "Code Sequence\nProblem"
    )
