"""Judge verdicts: accepted with its split, the first failing test decides, private tests unshown."""

from __future__ import annotations

from simulator.pipeline.judge import Outcome, cost, judge

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
    assert verdict.headline == "Failed on test 3 (a private test) (2/3 passed)"
    assert "SECRET" not in verdict.headline


def test_a_hidden_test_shows_whether_it_passed_only_not_how_it_failed_or_what_it_cost() -> None:
    """Issue 51, item 2: a program timing itself on a private input read it back from its cost."""
    slow = Outcome(2, False, "timeout", False, message="wall-clock limit of 1 s exceeded", seconds=1.66,
                   memory_kb=56934)  # fmt: skip
    outcomes = [Outcome(0, True, "ok", True, seconds=0.012, memory_kb=10035), slow]
    verdict = judge(outcomes, hidden={2})
    assert (verdict.verdict, verdict.short) == ("failed", "Failed 1/2")
    assert verdict.headline == "Failed on test 3 (a private test) (1/2 passed)"
    assert verdict.cost == "slowest test 12 ms · peak memory 9.8 MB"  # the tests the reader may see
    shown = judge(outcomes)  # the problem's owner
    assert shown.verdict == "timeout" and shown.cost == "slowest test 1.66 s · peak memory 55.6 MB"


def test_the_short_form_is_the_verdict_and_the_count_naming_no_test() -> None:
    assert judge(OK).short == "Accepted 3/3"
    failing = judge([*OK[:2], Outcome(2, False, "ok", False, "secret output", "secret expected")])
    assert failing.short == "Wrong answer 2/3"
    assert judge([Outcome(0, True, "timeout", False)]).short == "Time limit exceeded 0/1"
    assert judge([]).short == "Not run on any test"


def test_the_cost_is_the_slowest_untraced_test_and_the_peak_memory_as_a_judge_reports_it() -> None:
    """The line tracer slows a program down: a traced public test's time is not the program's."""
    outcomes = [
        Outcome(0, True, "ok", True, "2", "2", seconds=0.4, memory_kb=10_240, traced=True),
        Outcome(1, False, "ok", True, seconds=0.012, memory_kb=12_800),
        Outcome(2, False, "ok", True, seconds=0.0034, memory_kb=9_000),
    ]
    assert judge(outcomes).cost == "slowest test 12 ms · peak memory 12.5 MB"
    assert judge(outcomes[:1]).cost == "slowest test 400 ms (traced) · peak memory 10.0 MB"  # all traced
    slow = Outcome(0, True, "timeout", False, message="limit", seconds=3.2, memory_kb=None)
    assert judge([slow]).cost == "slowest test 3.20 s" and judge([slow]).verdict == "timeout"
    assert judge(OK).cost == ""  # rows kept before costs were: nothing is made up
    assert cost(0.0004, 2048) == "0 ms · 2.0 MB" and cost(None, None) == ""
