"""pass@k, Wilson and bootstrap intervals."""

from __future__ import annotations

import math

import pytest

from simulator.evaluation.metrics import bootstrap, estimate_pass_at_k, pass_at_k, wilson


def reference_pass_at_k(n: int, c: int, k: int) -> float:
    """CRUXEval's formula via combinations: 1 - C(n-c, k) / C(n, k)."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@pytest.mark.parametrize(
    ("n", "c", "k"), [(10, 0, 1), (10, 3, 1), (10, 3, 5), (5, 5, 5), (20, 1, 10), (4, 2, 4)]
)
def test_pass_at_k_is_the_unbiased_estimator(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(reference_pass_at_k(n, c, k))


def test_pass_at_1_is_the_fraction_correct() -> None:
    assert pass_at_k(8, 2, 1) == pytest.approx(0.25)


def test_pass_at_k_rejects_k_above_n() -> None:
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_wilson_matches_a_known_interval() -> None:
    est = wilson(8, 10)  # textbook: 0.8, [0.490, 0.943]
    assert est.value == 0.8
    assert est.low == pytest.approx(0.4902, abs=1e-3)
    assert est.high == pytest.approx(0.9433, abs=1e-3)


def test_wilson_stays_inside_0_1_at_the_edges() -> None:
    zero, full = wilson(0, 5), wilson(5, 5)
    assert zero.low == 0.0 and 0 < zero.high < 0.5
    assert full.high == 1.0 and 0.5 < full.low < 1


def test_bootstrap_brackets_the_mean_and_is_reproducible() -> None:
    values = [0.0, 0.25, 0.5, 1.0, 1.0, 0.75, 0.0, 0.5]
    est = bootstrap(values)
    assert est.low <= est.value <= est.high
    assert est.value == pytest.approx(sum(values) / len(values))
    assert bootstrap(values) == est


def test_estimate_uses_wilson_for_one_sample_and_bootstrap_otherwise() -> None:
    assert estimate_pass_at_k([(1, 1), (1, 0)], 1).method == "wilson"
    several = estimate_pass_at_k([(4, 1), (4, 0)], 1)
    assert several.method == "bootstrap" and several.value == pytest.approx(0.125)


def test_wilson_bounds_are_exact_at_zero_and_one() -> None:
    # plots draw value - low and high - value as error bars: they must never be negative
    assert wilson(0, 50).low == 0.0 and wilson(50, 50).high == 1.0
    for successes in range(0, 51):
        est = wilson(successes, 50)
        assert est.low <= est.value <= est.high


def test_ratio_bootstrap_pools_by_item_and_resamples_items() -> None:
    from simulator.evaluation.metrics import ratio_bootstrap

    est = ratio_bootstrap([(1, 1), (0, 3), (2, 4), (0, 0)])  # the item without questions is left out
    assert est.value == pytest.approx(3 / 8) and est.n == 3 and est.method == "bootstrap"
    assert 0.0 <= est.low <= est.value <= est.high <= 1.0
    assert ratio_bootstrap([]).n == 0
