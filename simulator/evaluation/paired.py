"""Paired comparison of two evaluations of the same items: is model B better than model A?

    execsim eval-diff BASE/results.json NEW/results.json

Both runs scored the same benchmark items, so the difference is taken per item (the item's pass@1,
``correct / n``, in B minus A) and its 95% interval comes from a percentile bootstrap that resamples
items with both runs' outcomes kept together. This is tighter than comparing two independent
intervals, and it is what "the interval excludes zero" means in docs/results.md. Items present in only
one run are left out (and counted), so a ``--limit`` run compares on what both scored.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RESAMPLES = 10_000


@dataclass(frozen=True)
class PairedDifference:
    """Mean per-item difference B - A with its bootstrap 95% interval, and how the items moved."""

    task: str
    value: float
    low: float
    high: float
    n: int
    a_mean: float
    b_mean: float
    better: int  # items where B scored higher than A
    worse: int  # items where B scored lower
    unpaired: int  # items only one of the runs has

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "excludes_zero": self.excludes_zero, "method": "paired bootstrap"}

    def row(self, metric: str, model: str) -> dict[str, Any]:
        """This difference as a row of a checkpoint manifest's ``evaluation`` (``model`` names the
        pair, e.g. "sft - base"), the shape the Checkpoints pages read."""
        return {
            "benchmark": self.task,
            "metric": metric,
            "model": model,
            "value": self.value,
            "n": self.n,
            "low": self.low,
            "high": self.high,
            "method": "paired bootstrap",
            "better": self.better,
            "worse": self.worse,
            "excludes_zero": self.excludes_zero,
        }

    def line(self) -> str:
        return (
            f"{self.task} n={self.n} a={self.a_mean:.3f} b={self.b_mean:.3f} "
            f"diff={self.value:+.3f}[{self.low:+.3f},{self.high:+.3f}] better={self.better} "
            f"worse={self.worse} excludes-zero={'yes' if self.excludes_zero else 'no'}"
        )


REPAIR_REPLIES = "repair-replies"  # a measure of self-rlef results: see ``item_scores``


def item_scores(record: dict[str, Any], measure: str | None = None) -> dict[str, float]:
    """Per-item pass@1 (``correct / n``) of a results.json record, keyed by item id; for self-rlef,
    whether the program a run submitted passes every test, public and private (1 or 0: the public
    test alone rewards a function that returns its expected value, which the model learned to write),
    with ``measure`` a way of picking of an mbpp run (``sim``, ``random``, ``sim-agree``...) its
    expected correctness (``items[].expected``), or with ``measure`` ``REPAIR_REPLIES`` the share of
    the item's repair replies that are a new program (the issue's "repair parse failures", per reply;
    items that sent no repair request left out)."""
    if measure is not None and measure != REPAIR_REPLIES:  # a way of picking, of an mbpp run's items
        if record.get("task") != "mbpp":
            raise ValueError(f"--measure {measure} is a way of picking of eval mbpp results")
        scores = {str(item["id"]): item["expected"].get(measure) for item in record["items"]}
        if None in scores.values():
            raise ValueError(
                f"no way {measure!r} in these results (ways: {', '.join(record['items'][0]['expected'])})"
            )
        return scores
    if measure == REPAIR_REPLIES:
        if record.get("task") != "self-rlef":
            raise ValueError(f"{REPAIR_REPLIES} measures self-rlef results, not {record.get('task')!r}")
        return {
            str(item["id"]): 1 - failed / total
            for item in record["items"]
            for failed, total in [item["parse"]["repair_reply"]]
            if total
        }
    if record.get("task") == "self-rlef":
        return {
            str(item["id"]): float(
                bool(item["final"]["public"]) and item["final"].get("private") is not False
            )
            for item in record["items"]
        }
    return {str(item["id"]): item["correct"] / item["n"] for item in record["items"] if item.get("n")}


def paired_bootstrap(
    pairs: Sequence[tuple[float, float]], resamples: int = RESAMPLES, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of b - a over pairs, with a percentile bootstrap 95% interval over pairs.

    >>> paired_bootstrap([(0, 1)] * 10)
    (1.0, 1.0, 1.0)
    >>> value, low, high = paired_bootstrap([(0, 1), (1, 0)] * 20)
    >>> value, low < 0 < high
    (0.0, True)
    """
    diffs = [b - a for a, b in pairs]
    n = len(diffs)
    if n == 0:
        return 0.0, -1.0, 1.0
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    low = means[int(0.025 * (resamples - 1))]
    high = means[int(math.ceil(0.975 * (resamples - 1)))]
    return sum(diffs) / n, low, high


def compare(
    a: dict[str, Any], b: dict[str, Any], seed: int = 0, measure: str | None = None
) -> PairedDifference:
    """Paired difference of two results.json records of the same task (B minus A), of their pass@1
    or of ``measure`` (``item_scores``)."""
    if a.get("task") != b.get("task"):
        raise ValueError(f"different tasks: {a.get('task')!r} and {b.get('task')!r}")
    scores_a, scores_b = item_scores(a, measure), item_scores(b, measure)
    shared = sorted(scores_a.keys() & scores_b.keys())
    pairs = [(scores_a[i], scores_b[i]) for i in shared]
    value, low, high = paired_bootstrap(pairs, seed=seed)
    n = len(pairs)
    return PairedDifference(
        task=measure or str(a.get("task")),
        value=value,
        low=low,
        high=high,
        n=n,
        a_mean=sum(x for x, _ in pairs) / n if n else 0.0,
        b_mean=sum(y for _, y in pairs) / n if n else 0.0,
        better=sum(y > x for x, y in pairs),
        worse=sum(y < x for x, y in pairs),
        unpaired=len(scores_a.keys() ^ scores_b.keys()),
    )


def compare_files(a: Path, b: Path, measure: str | None = None) -> PairedDifference:
    return compare(json.loads(Path(a).read_text()), json.loads(Path(b).read_text()), measure=measure)
