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
category (no variation: expected disagreement is zero); callers show it as "n/a".
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence


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
