"""Krippendorff's alpha (nominal), percent agreement, and which claims an edit touched."""

from __future__ import annotations

import pytest

from simulator.agreement import (
    SMALL_SAMPLE,
    edited_spans,
    krippendorff_alpha_nominal,
    pair_agreement,
    percent_agreement,
    small_sample,
)

N = None
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the nominal example: 4 coders,
# 12 units with missing values; the published value is 0.743.
CODERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


def test_alpha_matches_krippendorffs_published_nominal_example():
    units = list(zip(*CODERS, strict=True))
    assert krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=5e-4)


def test_perfect_agreement_is_one_and_systematic_disagreement_is_negative():
    assert krippendorff_alpha_nominal([["a", "a"], ["r", "r"], ["a", "a"]]) == 1.0
    assert krippendorff_alpha_nominal([["a", "r"], ["r", "a"], ["a", "r"]]) < 0


def test_alpha_is_undefined_without_variation_or_pairable_units():
    assert krippendorff_alpha_nominal([["a", "a"], ["a", "a"]]) is None
    assert krippendorff_alpha_nominal([["a"], ["r", None]]) is None
    assert krippendorff_alpha_nominal([]) is None


def test_units_with_a_single_label_are_ignored():
    with_singles = [["a", "a"], ["r", "r"], ["a", "r"], ["a"], [None, "r"]]
    assert krippendorff_alpha_nominal(with_singles) == krippendorff_alpha_nominal(with_singles[:3])


def test_percent_agreement_counts_pairs_within_units():
    assert percent_agreement([["a", "a", "r"]]) == pytest.approx(1 / 3)
    assert percent_agreement([["a", "a"], ["a", "r"]]) == 0.5
    assert percent_agreement([["a"]]) is None


def test_edited_spans_flags_only_the_claims_that_changed():
    original = "x = 3, y = 4, z = 5"
    spans = [(0, 5), (7, 12), (14, 19)]
    assert edited_spans(original, "x = 3, y = 9, z = 5", spans) == [False, True, False]
    assert edited_spans(original, original, spans) == [False, False, False]
    assert edited_spans(original, "x = 3, z = 5", spans) == [False, True, False]  # deleted
    assert edited_spans(original, "x = 3, y = 4, z = 5. Done.", spans) == [False, False, False]


def test_two_items_both_flipped_give_minus_a_half_and_a_small_sample():
    """Issue 52: the agreement page showed -0.500 from 2 items with no caution."""
    units = [["accept", "reject"], ["reject", "accept"]]
    assert krippendorff_alpha_nominal(units) == pytest.approx(-0.5)
    assert small_sample(2) and not small_sample(SMALL_SAMPLE) and not small_sample(0)


def test_pair_agreement_counts_each_pair_on_the_units_both_labelled():
    units = [
        {"ann1": "a", "ann2": "a", "ann3": "r"},
        {"ann1": "r", "ann2": "a"},
        {"ann2": "r", "ann3": "r", "ann1": None},
        {"ann3": "a"},
    ]
    pairs = pair_agreement(units)
    assert list(pairs) == [("ann1", "ann2"), ("ann1", "ann3"), ("ann2", "ann3")]
    one_two = pairs[("ann1", "ann2")]
    assert (one_two.units, one_two.agreed, one_two.percent) == (2, 1, 0.5)
    assert one_two.alpha == krippendorff_alpha_nominal([["a", "a"], ["r", "a"]])
    assert (pairs[("ann1", "ann3")].units, pairs[("ann1", "ann3")].percent) == (1, 0.0)
    assert (pairs[("ann2", "ann3")].units, pairs[("ann2", "ann3")].agreed) == (2, 1)
    assert pair_agreement([{"ann1": "a"}]) == {}
