"""The annotation queue: one item per model simulation (a runs.Simulation) with the real trace it is
checked against; the annotations it received; and staff adjudication when annotators disagree.

Item lifecycle (``status``): open (needs more annotations) -> done (enough annotations, all agreeing
on accept/reject) or disputed (they disagree) -> adjudicated (staff decided). ``decision`` is the
final accept/reject, which the export follows. ``claimed_by``/``claimed_at`` say who holds the item;
a claim older than the timeout (webapp.explorer.conf.claim_seconds) counts as released.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from simulator.execution import Program
from simulator.execution.trace import Trace as CoreTrace
from simulator.nlex.verify import Verification, verify


class AnnotationItem(models.Model):
    OPEN, DONE, DISPUTED, ADJUDICATED = "open", "done", "disputed", "adjudicated"
    STATUSES = [(s, s) for s in (OPEN, DONE, DISPUTED, ADJUDICATED)]

    simulation = models.OneToOneField(
        "runs.Simulation", on_delete=models.CASCADE, related_name="annotation_item"
    )
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="annotation_items")
    problem = models.ForeignKey(
        "problems.Problem", null=True, blank=True, on_delete=models.SET_NULL, related_name="annotation_items"
    )
    model = models.CharField(max_length=200, db_index=True)  # the model or checkpoint that simulated
    code = models.TextField()
    call = models.TextField(null=True, blank=True)
    stdin = models.TextField(null=True, blank=True)
    text = models.TextField()  # the model's NLEX, as it wrote it
    trace = models.JSONField(default=dict)  # the real execution's trace
    exec_status = models.CharField(max_length=20)
    original_check = models.JSONField(default=dict)  # simulator.nlex.verify.Verification.to_dict() of `text`
    divergent = models.BooleanField(default=False, db_index=True)  # original_check has a first divergence
    required = models.PositiveIntegerField(default=1)  # annotations wanted (agreement when > 1)
    status = models.CharField(max_length=12, choices=STATUSES, default=OPEN, db_index=True)
    decision = models.CharField(max_length=8, blank=True)  # "accept" | "reject" once decided
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"item {self.pk}"

    def program(self) -> Program:
        return Program(code=self.code, call=self.call, stdin=self.stdin)

    def core_trace(self) -> CoreTrace:
        return CoreTrace.from_dict(self.trace)

    def claim_spans(self) -> list[tuple[int, int]]:
        """Where the claims of the model's text are (character offsets), from its verification."""
        claims = self.original_check.get("claims")
        if isinstance(claims, list):
            return [(c["start"], c["end"]) for c in claims]
        return [tuple(span) for span in self.original_check.get("spans", [])]  # before re-verification

    def verify(self, text: str) -> Verification:
        """``text`` (the model's, or an annotator's correction) checked against this item's real run."""
        return verify(text, self.core_trace(), self.program(), status=self.exec_status)

    def counted(self) -> models.QuerySet[Annotation]:
        """The annotations that count toward ``required`` (skips do not)."""
        return self.annotations.exclude(decision=Annotation.SKIP)


class Annotation(models.Model):
    ACCEPT, REJECT, SKIP = "accept", "reject", "skip"
    DECISIONS = [(d, d) for d in (ACCEPT, REJECT, SKIP)]

    item = models.ForeignKey(AnnotationItem, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations"
    )
    decision = models.CharField(max_length=8, choices=DECISIONS)
    text = models.TextField(blank=True)  # the corrected NLEX (accept) or the text as left (reject)
    verification = models.JSONField(default=dict)  # simulator.nlex.verify.Verification.to_dict() of `text`
    edited_claims = models.JSONField(default=list)  # per claim of item.text: True when edited
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="annotation_one_per_annotator")
        ]

    @property
    def verified(self) -> bool:
        return self.verification.get("verified") is True


class Adjudication(models.Model):
    """Staff's decision on a disputed item; with accept, the text that is exported (a chosen
    annotation's, possibly edited by the adjudicator)."""

    item = models.OneToOneField(AnnotationItem, on_delete=models.CASCADE, related_name="adjudication")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    decision = models.CharField(max_length=8)
    chosen = models.ForeignKey(Annotation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    text = models.TextField(blank=True)
    verification = models.JSONField(default=dict)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def summary(self) -> dict[str, Any]:
        return {"decision": self.decision, "adjudicator": self.adjudicator.get_username()}
