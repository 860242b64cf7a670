"""Agreement between annotators, per item and overall: Krippendorff's alpha and percent agreement on
the accept/reject decision, and on claims (each claim of the model's text labelled "edited" or
"kept" by each annotator), and each pair of annotators on the items both decided (the annotator-pair
matrix). The numbers come from simulator.agreement (unit-tested there)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simulator.agreement import (
    SMALL_SAMPLE,
    PairAgreement,
    krippendorff_alpha_nominal,
    pair_agreement,
    percent_agreement,
    small_sample,
)
from webapp.annotation.models import Annotation, AnnotationItem


def _units(item: AnnotationItem) -> tuple[list[str], list[list[str]]]:
    counted = [a for a in item.annotations.all() if a.decision != Annotation.SKIP]
    decisions = [a.decision for a in counted]
    claims = len(item.claim_spans())
    per_claim = []
    for i in range(claims):
        labels = [("edited" if a.edited_claims[i] else "kept") for a in counted if i < len(a.edited_claims)]
        per_claim.append(labels)
    return decisions, per_claim


def item_agreement(item: AnnotationItem) -> dict[str, Any]:
    decisions, per_claim = _units(item)
    return {
        "annotators": len(decisions),
        "decision_agreement": percent_agreement([decisions]),
        "claim_agreement": percent_agreement(per_claim),
    }


def overall_agreement(items: Iterable[AnnotationItem]) -> dict[str, Any]:
    """The agreement figures of the stats page: alpha and percent agreement on decisions and on claims,
    how many units each comes from (``small_sample``: too few to rely on), and the annotator pairs."""
    decision_units: list[list[str]] = []
    claim_units: list[list[str]] = []
    by_annotator: list[dict[str, str]] = []
    for item in items:
        decisions, per_claim = _units(item)
        if len(decisions) >= 2:
            decision_units.append(decisions)
            claim_units.extend(per_claim)
            counted = (a for a in item.annotations.all() if a.decision != Annotation.SKIP)
            by_annotator.append({a.annotator.get_username(): a.decision for a in counted})
    names, rows = pair_matrix(pair_agreement(by_annotator))
    return {
        "items": len(decision_units),
        "small_sample": small_sample(len(decision_units)),
        "small_sample_units": SMALL_SAMPLE,
        "annotators": names,
        "pairs": rows,
        "decision_alpha": krippendorff_alpha_nominal(decision_units),
        "decision_agreement": percent_agreement(decision_units),
        "claims": len(claim_units),
        "claim_alpha": krippendorff_alpha_nominal(claim_units),
        "claim_agreement": percent_agreement(claim_units),
    }


def pair_matrix(
    pairs: dict[tuple[str, str], PairAgreement],
) -> tuple[list[str], list[tuple[str, list[dict[str, Any]]]]]:
    """The annotator-pair matrix: the annotators (in name order) and, per annotator, a cell per other
    annotator with their ``PairAgreement`` (None on the diagonal and for a pair with no item in common);
    the matrix is symmetric, as Label Studio shows it."""
    names = sorted({name for pair in pairs for name in pair})
    rows = []
    for row in names:
        cells = []
        for column in names:
            key = (row, column) if row < column else (column, row)
            cells.append({"column": column, "agreement": pairs.get(key) if row != column else None})
        rows.append((row, cells))
    return names, rows
