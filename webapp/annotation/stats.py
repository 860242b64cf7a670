"""Agreement between annotators, per item and overall: Krippendorff's alpha and percent agreement on
the accept/reject decision, and on claims (each claim of the model's text labelled "edited" or
"kept" by each annotator). The numbers come from simulator.agreement (unit-tested there)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simulator.agreement import krippendorff_alpha_nominal, percent_agreement
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
    decision_units: list[list[str]] = []
    claim_units: list[list[str]] = []
    for item in items:
        decisions, per_claim = _units(item)
        if len(decisions) >= 2:
            decision_units.append(decisions)
            claim_units.extend(per_claim)
    return {
        "items": len(decision_units),
        "decision_alpha": krippendorff_alpha_nominal(decision_units),
        "decision_agreement": percent_agreement(decision_units),
        "claims": len(claim_units),
        "claim_alpha": krippendorff_alpha_nominal(claim_units),
        "claim_agreement": percent_agreement(claim_units),
    }
