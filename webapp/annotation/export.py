"""Accepted corrections as export records (simulator.annotations.ExportRecord), following staff's
adjudication where there is one, kept by an ``ExportFilter`` (status, queue, days decided); shared by
the export page, its download and ``manage.py export_annotations``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

from django.utils import timezone

from simulator.annotations import ExportFilter, ExportRecord, prompt_for
from webapp.annotation.models import Annotation, AnnotationItem


def _record(item: AnnotationItem) -> ExportRecord | None:
    sim = item.simulation
    base: dict[str, Any] = {
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
            decided_at=timezone.localtime(adjudication.created_at).isoformat(),
            **base,
        )
    if item.status != AnnotationItem.DONE or item.decision != Annotation.ACCEPT:
        return None
    accepted = list(item.annotations.filter(decision=Annotation.ACCEPT).select_related("annotator"))
    chosen = next((a for a in accepted if a.verified), accepted[0])  # a verified text if any
    decided = max(a.created_at for a in accepted)  # the annotation that made it done (all accept)
    return ExportRecord(
        completion=chosen.text,
        annotator=chosen.annotator.get_username(),
        verification=chosen.verification,
        decided_at=timezone.localtime(decided).isoformat(),
        **base,
    )


def export_records(keep: ExportFilter | str = "verified") -> Iterator[ExportRecord]:
    """Records of accepted items that ``keep`` keeps (an ``ExportFilter``, or a status alone)."""
    keep = keep if isinstance(keep, ExportFilter) else ExportFilter(keep)
    items = (
        AnnotationItem.objects.filter(status__in=(AnnotationItem.DONE, AnnotationItem.ADJUDICATED))
        .select_related("simulation", "adjudication__adjudicator", "adjudication__chosen__annotator")
        .order_by("id")
    )
    for item in items:
        record = _record(item)
        if record is not None and keep.keeps(record):
            yield record


def write_jsonl(out: IO[str], keep: ExportFilter | str = "verified") -> int:
    count = 0
    for record in export_records(keep):
        out.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
        count += 1
    return count
