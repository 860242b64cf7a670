"""Best@k selection and output matching."""

from __future__ import annotations

import random

import pytest

from simulator.pipeline.matching import matches
from simulator.pipeline.selection import best_of


def test_the_most_matching_candidate_wins() -> None:
    selection = best_of({0: 1, 1: 3, 2: 2}, random.Random(0), tests=3)
    assert (selection.candidate, selection.tied) == (1, (1,))
    assert selection.reason == "candidate 1 matched 3 of 3 public tests in simulation"


def test_ties_are_broken_by_the_seeded_generator() -> None:
    scores = {0: 2, 1: 2, 2: 0, 3: 2}
    picks = {best_of(scores, random.Random(seed), tests=2).candidate for seed in range(30)}
    assert picks == {0, 1, 3}
    assert best_of(scores, random.Random(5), tests=2) == best_of(scores, random.Random(5), tests=2)
    assert "tied with" in best_of(scores, random.Random(5), tests=2).reason


def test_a_program_known_to_fail_loses_a_tie_to_one_that_is_not() -> None:
    scores = {0: 0, 1: 0, 2: 0, 3: 0}  # nothing matched: 1 and 3 are known to fail
    picks = {best_of(scores, random.Random(seed), tests=1, known={1, 3}).candidate for seed in range(30)}
    assert picks == {0, 2}
    selection = best_of(scores, random.Random(0), tests=1, known={1, 3})
    assert "tied with 1, 3, which are known to fail" in selection.reason
    assert selection.broken_by == ("known", "random")  # what decided, in order
    # before agreement: two copies of a program known to fail do not outweigh one that may pass
    agreement = {0: 1, 1: 2, 2: 1, 3: 2}
    selection = best_of(scores, random.Random(0), tests=1, known={1, 3}, agreement=agreement)
    assert selection.candidate in {0, 2} and selection.broken_by == ("known", "agreement", "random")
    # when every tied program is known to fail, the draw is among them all, as before
    assert {best_of(scores, random.Random(s), tests=1, known={0, 1, 2, 3}).candidate for s in range(30)} == {
        0,
        1,
        2,
        3,
    }
    assert (
        "tied with 1, which is known to fail"
        in best_of({0: 0, 1: 0}, random.Random(0), tests=1, known={1}).reason
    )
    # a better score wins whatever is known of the others
    assert best_of({0: 1, 1: 0}, random.Random(0), tests=1, known={1}).candidate == 0


def test_the_pool_is_what_the_draw_chose_among_and_gives_the_expected_pick() -> None:
    """An evaluation reads a pick's correctness without the draw's noise from the pool."""
    scores = {0: 1, 1: 1, 2: 0, 3: 1}
    paper = best_of(scores, random.Random(0), tests=1)  # matches alone, ties at random
    assert paper.pool == (0, 1, 3)
    assert paper.expected({0: True, 1: False, 3: True}) == 2 / 3
    app = best_of(scores, random.Random(0), tests=1, known={0}, agreement={1: 2, 3: 1})
    assert app.pool == (1,) and app.candidate == 1
    assert app.expected({0: True, 1: False, 3: True}) == 0.0
    assert best_of({0: 2, 1: 1}, random.Random(0), tests=2).pool == (0,)


def test_nothing_to_select_is_an_error() -> None:
    with pytest.raises(ValueError):
        best_of({}, random.Random(0), tests=1)


@pytest.mark.parametrize(
    ("kind", "expected", "actual", "tolerance", "result"),
    [
        ("stdin", "1 2\n3\n", "1 2 3", None, True),
        ("stdin", "0.333333", "0.3333331", None, True),
        ("stdin", "0.5", "0.6", None, False),
        ("stdin", "0.5", "0.6", 0.2, True),
        ("stdin", "10", "10.0000001", None, True),  # one side is a float: within tolerance
        ("stdin", "1000001", "1000000", 1e-3, False),  # integers compare exactly
        ("call", "[1, 2]", "[1,2]", None, True),
        ("call", "8", "8.0", None, True),  # Python ==, as CRUXEval's assert
        ("call", "'a'", '"a"', None, True),
        ("call", "(1,)", "[1]", None, False),
        ("call", "set()", "set( )", None, True),  # not a literal: whitespace-free text
        ("call", "1", None, None, False),
    ],
)
def test_matches(kind, expected, actual, tolerance, result) -> None:
    assert matches(kind, expected, actual, tolerance) is result


def test_a_tie_goes_to_the_program_written_most_often_then_at_random() -> None:
    scores = {0: 0, 1: 0, 2: 0, 3: 0}
    agreement = {0: 1, 1: 2, 2: 1, 3: 2}  # 1 and 3 are the same program
    picks = {best_of(scores, random.Random(s), tests=1, agreement=agreement).candidate for s in range(30)}
    assert picks == {1, 3}
    reason = best_of(scores, random.Random(0), tests=1, agreement=agreement).reason
    assert "tied with 0, 2, it is the program written most often (2 of the 4 candidates with code)" in reason
    assert reason.endswith("chosen at random")
    # all as often: the draw decides among all, and the reason says why
    even = best_of(scores, random.Random(0), tests=1, agreement=dict.fromkeys(scores, 1))
    assert "written most often" not in even.reason
    assert even.reason.endswith("(written as often, 1 of the 4), chosen at random")


def test_a_tie_left_among_copies_of_one_program_is_no_draw_and_says_so() -> None:
    scores = {0: 1, 1: 1, 2: 1, 3: 0}
    copies = best_of(
        scores, random.Random(0), tests=1, agreement={0: 3, 1: 3, 2: 3}, same_as={0: 0, 1: 0, 2: 0}
    )
    assert copies.broken_by == ("agreement", "copies") and copies.pool == (0, 1, 2)
    assert copies.reason.endswith(", the same program: the same pick")
    distinct = best_of(scores, random.Random(0), tests=1, same_as={0: 0, 1: 1, 2: 2})
    assert distinct.broken_by == ("random",) and distinct.reason.endswith("chosen at random")
