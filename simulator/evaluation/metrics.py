"""Benchmark figures and their 95% confidence intervals.

- ``pass_at_k``: the unbiased estimator of Chen et al. (2021), as CRUXEval computes it:
  ``1 - prod(1 - k / arange(n - c + 1, n + 1))`` for n samples of which c are correct.
- ``wilson``: the Wilson score interval, used when each item contributes one 0/1 outcome (pass@1 with
  one sample, Best@k correctness); it behaves at 0 and 1 and for small n, unlike the normal interval.
- ``bootstrap``: the percentile bootstrap over items (2,000 resamples, fixed seed), used for means of
  per-item fractions such as pass@k from several samples.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    """A figure (a fraction) with its 95% interval and how that interval was computed."""

    value: float
    low: float
    high: float
    n: int
    method: str  # "wilson" | "bootstrap"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c correct) is correct."""
    if not (0 <= c <= n) or k < 1 or k > n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def wilson(successes: int, n: int, z: float = Z95) -> Estimate:
    if n == 0:
        return Estimate(0.0, 0.0, 1.0, 0, "wilson")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, min(p, centre - half))  # exact at the ends: no
    high = 1.0 if successes == n else min(1.0, max(p, centre + half))  # rounding past the value
    return Estimate(p, low, high, n, "wilson")


def bootstrap(values: Sequence[float], resamples: int = 2000, seed: int = 0) -> Estimate:
    n = len(values)
    if n == 0:
        return Estimate(0.0, 0.0, 1.0, 0, "bootstrap")
    mean = sum(values) / n
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    low = means[int(0.025 * (resamples - 1))]
    high = means[int(math.ceil(0.975 * (resamples - 1)))]
    return Estimate(mean, low, high, n, "bootstrap")


def estimate_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> Estimate:
    """pass@k over items given (n, c) per item: Wilson when it is a plain proportion, else bootstrap."""
    if all(n == 1 for n, _ in counts) and k == 1:
        return wilson(sum(c for _, c in counts), len(counts))
    return bootstrap([pass_at_k(n, c, k) for n, c in counts])


def ratio_bootstrap(pairs: Sequence[tuple[float, float]], resamples: int = 2000, seed: int = 0) -> Estimate:
    """sum(numerators) / sum(denominators) over items, with a percentile bootstrap that resamples
    items (a cluster bootstrap: questions about one program are not independent). Used for white-box
    accuracy, where items carry different numbers of questions; ``n`` is the number of items."""
    pairs = [(a, b) for a, b in pairs if b > 0]
    n = len(pairs)
    if n == 0:
        return Estimate(0.0, 0.0, 1.0, 0, "bootstrap")

    def ratio(sample: Sequence[tuple[float, float]]) -> float:
        return sum(a for a, _ in sample) / sum(b for _, b in sample)

    rng = random.Random(seed)
    ratios = sorted(ratio(rng.choices(pairs, k=n)) for _ in range(resamples))
    low = ratios[int(0.025 * (resamples - 1))]
    high = ratios[int(math.ceil(0.975 * (resamples - 1)))]
    return Estimate(ratio(pairs), low, high, n, "bootstrap")
