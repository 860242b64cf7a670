"""Inter-annotator agreement: Krippendorff's alpha for nominal data and pairwise percent agreement, in
pure Python, plus which claims of a text an annotator edited (for claim-level agreement).

A *unit* is one thing several coders labelled (an annotation item, or one claim of a simulated trace):
the sequence of the labels it received, ``None`` for a coder who did not label it. Units with fewer
than two labels are not pairable and are ignored, as Krippendorff (2011, "Computing Krippendorff's
alpha-reliability") prescribes.

    alpha = 1 - D_o / D_e, computed from the coincidence matrix o_ck:
    o_ck = sum over units of (number of c-k pairs in the unit) / (m_u - 1)
    alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c * n_k

Alpha is undefined (``None``) when nothing is pairable or when every pairable label is the same
category (no variation: expected disagreement is zero); callers show it as "n/a". From few units it
is a rough sign, not a measure: each unit weighs a lot (two items can give -0.5 as easily as 1), so
pages show how many units it comes from and caution below ``SMALL_SAMPLE`` (``small_sample``).

``pair_agreement`` gives each pair of coders what they agree on among the units both labelled (the
annotator-pair matrix of Label Studio): who disagrees with whom, where an overall figure hides it.
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

# Fewer pairable units than this and an agreement figure is cautioned as a small sample: one unit more or
# less moves it a lot (with two units, alpha goes from 1 to -0.5 when both flip), and Krippendorff's own
# sampling advice asks for more units still before relying on a value at a chosen significance.
SMALL_SAMPLE = 30


def _pairable(units: Iterable[Sequence[Hashable | None]]) -> list[list[Hashable]]:
    kept = []
    for unit in units:
        values = [v for v in unit if v is not None]
        if len(values) >= 2:
            kept.append(values)
    return kept


def krippendorff_alpha_nominal(units: Iterable[Sequence[Hashable | None]]) -> float | None:
    """Krippendorff's alpha for nominal labels; None when undefined (see module docstring)."""
    coincidence: defaultdict[tuple[Hashable, Hashable], float] = defaultdict(float)
    for values in _pairable(units):
        m = len(values)
        counts = Counter(values)
        for c, nc in counts.items():
            for k, nk in counts.items():
                pairs = nc * (nk - 1) if c == k else nc * nk
                if pairs:
                    coincidence[(c, k)] += pairs / (m - 1)
    totals: defaultdict[Hashable, float] = defaultdict(float)
    for (c, _), weight in coincidence.items():
        totals[c] += weight
    n = sum(totals.values())
    if n <= 1:
        return None
    observed = sum(w for (c, k), w in coincidence.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if expected == 0:
        return None
    return 1.0 - (n - 1) * observed / expected


def percent_agreement(units: Iterable[Sequence[Hashable | None]]) -> float | None:
    """The fraction of agreeing pairs of labels within units (pairs of coders on the same unit)."""
    agree = total = 0
    for values in _pairable(units):
        for i in range(len(values)):
            for j in range(i + 1, len(values)):
                total += 1
                agree += values[i] == values[j]
    return agree / total if total else None


def edited_spans(original: str, corrected: str, spans: Sequence[tuple[int, int]]) -> list[bool]:
    """For each ``(start, end)`` span of ``original`` (a claim's offsets): whether ``corrected``
    changed it (a replaced or deleted character inside it, or text inserted strictly inside it).
    The claim-level label an annotator gives a claim is then "edited" or "kept"."""
    matcher = difflib.SequenceMatcher(None, original, corrected, autojunk=False)
    changes = [(i1, i2) for tag, i1, i2, _, _ in matcher.get_opcodes() if tag != "equal"]
    result = []
    for start, end in spans:
        # an insertion (i1 == i2) edits a claim when strictly inside it; other changes when they overlap
        result.append(any(start < i1 < end if i1 == i2 else i1 < end and start < i2 for i1, i2 in changes))
    return result


def small_sample(units: int) -> bool:
    """Whether an agreement figure from ``units`` pairable units needs a caution (see ``SMALL_SAMPLE``)."""
    return 0 < units < SMALL_SAMPLE


@dataclass(frozen=True)
class PairAgreement:
    """Two coders on the units both labelled: how many, how many alike, and alpha over those units."""

    coders: tuple[str, str]
    units: int
    agreed: int
    alpha: float | None

    @property
    def percent(self) -> float | None:
        return self.agreed / self.units if self.units else None


def pair_agreement(units: Iterable[Mapping[str, Hashable | None]]) -> dict[tuple[str, str], PairAgreement]:
    """For each pair of coders (in name order) who labelled at least one unit in common, their agreement
    on those units. A unit maps each coder to their label (``None``: not labelled)."""
    shared: defaultdict[tuple[str, str], list[tuple[Hashable, Hashable]]] = defaultdict(list)
    for unit in units:
        labelled = sorted(((c, label) for c, label in unit.items() if label is not None), key=lambda x: x[0])
        for (first, a), (second, b) in combinations(labelled, 2):
            shared[(first, second)].append((a, b))
    return {
        pair: PairAgreement(
            pair, len(labels), sum(a == b for a, b in labels), krippendorff_alpha_nominal(labels)
        )
        for pair, labels in sorted(shared.items())
    }
