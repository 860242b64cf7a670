"""Accepted corrections as export records (simulator.annotations.ExportRecord), following staff's
adjudication where there is one; shared by the export page and ``manage.py export_annotations``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO

from simulator.annotations import ExportRecord, keep, prompt_for
from webapp.annotation.models import Annotation, AnnotationItem


def _record(item: AnnotationItem) -> ExportRecord | None:
    sim = item.simulation
    base = {
        "prompt": prompt_for(item.code, call=item.call, stdin=item.stdin),
        "source_run": str(item.run_id),
        "model": item.model,
        "item": item.pk,
        "candidate": sim.candidate,
        "test": sim.test,
        "turn": sim.turn,
        "sample": sim.sample,
    }
    if item.status == AnnotationItem.ADJUDICATED:
        adjudication = item.adjudication
        if adjudication.decision != Annotation.ACCEPT:
            return None
        chosen = adjudication.chosen
        # A replacement text (typed by the adjudicator, not an annotator's as it was) is theirs.
        replaced = chosen is None or adjudication.text != chosen.text
        annotator = adjudication.adjudicator if replaced else chosen.annotator
        return ExportRecord(
            completion=adjudication.text,
            annotator=annotator.get_username(),
            verification=adjudication.verification,
            decided_by="adjudication",
            adjudicator=adjudication.adjudicator.get_username(),
            **base,
        )
    if item.status != AnnotationItem.DONE or item.decision != Annotation.ACCEPT:
        return None
    accepted = list(item.annotations.filter(decision=Annotation.ACCEPT).select_related("annotator"))
    chosen = next((a for a in accepted if a.verified), accepted[0])  # a verified text if any
    return ExportRecord(
        completion=chosen.text,
        annotator=chosen.annotator.get_username(),
        verification=chosen.verification,
        **base,
    )


def export_records(status: str = "verified") -> Iterator[ExportRecord]:
    """Records of accepted items, filtered by verification status (verified, unverified, all)."""
    items = (
        AnnotationItem.objects.filter(status__in=(AnnotationItem.DONE, AnnotationItem.ADJUDICATED))
        .select_related("simulation", "adjudication__adjudicator", "adjudication__chosen__annotator")
        .order_by("id")
    )
    for item in items:
        record = _record(item)
        if record is not None and keep(record, status):
            yield record


def write_jsonl(out: IO[str], status: str = "verified") -> int:
    count = 0
    for record in export_records(status):
        out.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
        count += 1
    return count
