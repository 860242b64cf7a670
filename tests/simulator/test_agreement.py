"""Krippendorff's alpha (nominal), percent agreement, and which claims an edit touched."""

from __future__ import annotations

import pytest

from simulator.agreement import edited_spans, krippendorff_alpha_nominal, percent_agreement

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
