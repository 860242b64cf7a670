"""Judge verdicts: accepted with its split, the first failing test decides, private tests unshown."""

from __future__ import annotations

from simulator.pipeline.judge import Outcome, judge

OK = [
    Outcome(0, True, "ok", True, "2", "2"),
    Outcome(1, True, "ok", True, "6", "6"),
    Outcome(2, False, "ok", True),
]


def test_all_tests_passing_is_accepted_with_the_public_private_split() -> None:
    verdict = judge(OK)
    assert verdict.verdict == "accepted" and verdict.headline == "Accepted 3/3 (2 public, 1 private)"


def test_the_first_failing_test_in_order_decides() -> None:
    outcomes = [
        Outcome(2, True, "runtime_error", False, "", "9", "TypeError: bad operand (line 3)"),
        Outcome(1, True, "ok", False, "None", "0"),
        Outcome(0, True, "ok", True, "1", "1"),
    ]
    verdict = judge(outcomes)
    assert verdict.verdict == "wrong_answer" and verdict.test == 1
    assert verdict.headline == "Wrong answer on test 2: expected 0, got None (1/3 passed)"


def test_a_runtime_error_says_the_exception_and_its_line() -> None:
    verdict = judge(
        [Outcome(0, True, "runtime_error", False, "[runtime_error] x", "1", "TypeError: bad (line 3)")]
    )
    assert verdict.headline == "Runtime error on test 1: TypeError: bad (line 3) (0/1 passed)"
    assert judge(
        [Outcome(0, True, "timeout", False, message="wall-clock limit of 3 s exceeded")]
    ).headline.startswith("Time limit exceeded on test 1")


def test_a_hidden_test_is_named_but_not_shown() -> None:
    outcomes = [*OK[:2], Outcome(2, False, "ok", False, "SECRET-OUT", "SECRET-EXPECTED")]
    verdict = judge(outcomes, hidden={2})
    assert verdict.headline == "Wrong answer on test 3 (a private test) (2/3 passed)"
    assert "SECRET" not in verdict.headline


def test_the_short_form_is_the_verdict_and_the_count_naming_no_test() -> None:
    assert judge(OK).short == "Accepted 3/3"
    failing = judge([*OK[:2], Outcome(2, False, "ok", False, "secret output", "secret expected")])
    assert failing.short == "Wrong answer 2/3"
    assert judge([Outcome(0, True, "timeout", False)]).short == "Time limit exceeded 0/1"
    assert judge([]).short == "Not run on any test"
