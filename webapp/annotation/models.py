"""The annotation queue: one item per model simulation (a runs.Simulation) with the real trace it is
checked against; the annotations it received; and staff adjudication when annotators disagree.

Item lifecycle (``status``): open (needs more annotations) -> done (enough annotations, all agreeing on
accept/reject) or disputed (they disagree) -> adjudicated (staff decided). An item whose task (model,
program, input and simulated text: ``task_key``) is already queued is a *duplicate* of that item and
is never served: the model writes the same program several times among k candidates and simulates it
greedily, so without this an annotator would correct the same text again and again, and the export
would repeat it (Prodigy dedupes its stream by task hash for the same reason). ``decision`` is the final
accept/reject, which the export follows. ``claimed_by``/``claimed_at`` say who holds the item; a claim
older than the timeout (the item's ``claim_seconds``, else the site's
``EXECSIM_ANNOTATION_CLAIM_SECONDS``) counts as released: the item is re-queued. Staff set both per
queue (``QueuePolicy``, one per model), for the items already queued and the ones added later.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.db import models

from simulator.execution import Program
from simulator.execution.trace import Trace as CoreTrace
from simulator.nlex.verify import SCHEMA_VERSION, Verification, verify
from simulator.prompts import simulate


class AnnotationItem(models.Model):
    OPEN, DONE, DISPUTED, ADJUDICATED, DUPLICATE = "open", "done", "disputed", "adjudicated", "duplicate"
    STATUSES = [(s, s) for s in (OPEN, DONE, DISPUTED, ADJUDICATED, DUPLICATE)]

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
    claim_seconds = models.PositiveIntegerField(null=True, blank=True)  # None: the site's claim timeout
    status = models.CharField(max_length=12, choices=STATUSES, default=OPEN, db_index=True)
    decision = models.CharField(max_length=8, blank=True)  # "accept" | "reject" once decided
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    task_key = models.CharField(max_length=64, blank=True, db_index=True)  # ``key_of`` its task
    # Deleted with its original: their simulations then wait to be added again (``enqueue.runs_to_add``).
    duplicate_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="duplicates"
    )

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"item {self.pk}"

    def program(self) -> Program:
        return Program(code=self.code, call=self.call, stdin=self.stdin)

    @staticmethod
    def key_of(model: str, program: Program, text: str) -> str:
        """What makes two items the same task: the same model simulated the same program on the same
        input and wrote the same text (so the real trace and the check are the same too)."""
        blob = json.dumps([model, program.code, program.call, program.stdin, text], ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def narrated(self) -> bool:
        """Whether the model narrated the run; else it was asked for the answer at once (the app's
        default), and only the answer is there to correct."""
        return not self.text.startswith(simulate.EMPTY_THOUGHT)

    def core_trace(self) -> CoreTrace:
        return CoreTrace.from_dict(self.trace)

    def claim_spans(self) -> list[tuple[int, int]]:
        """Where the claims of the model's text are (character offsets), from its verification."""
        claims = self.original_check.get("claims")
        if isinstance(claims, list):
            return [(c["start"], c["end"]) for c in claims]
        return [tuple(span) for span in self.original_check.get("spans", [])]  # before re-verification

    def verify(self, text: str, *, fresh: bool = False) -> Verification:
        """``text`` (the model's, or an annotator's correction) checked against this item's real run.
        The model's own text was checked when the item was queued (``original_check``, kept current by
        ``manage.py reverify``, which asks ``fresh``): a page view reads that instead of checking it
        again."""
        stored = self.original_check
        current = stored and stored.get("schema_version", SCHEMA_VERSION) == SCHEMA_VERSION
        if text == self.text and current and not fresh:
            return Verification.from_dict(stored)
        return verify(text, self.core_trace(), self.program(), status=self.exec_status)

    def real_outcome(self) -> str:
        """What the real run gave, in words, for the review header: the value the call returned, what
        the program printed, or the exception it raised (not only the status)."""
        trace = self.core_trace()
        raised = next((s.value for s in reversed(trace.steps) if s.event == "exception" and s.value), None)
        if self.exec_status != "ok":
            why = f"raised {raised.repr}" if raised is not None else (trace.error or "no result")
            return f"{self.exec_status}: {why}"
        parts = []
        if self.call:
            returns = [s for s in trace.steps if s.event == "return" and s.value is not None]
            if returns:
                top = min(s.depth for s in returns)
                value = next(s.value for s in reversed(returns) if s.depth == top)
                parts.append(f"returned {value.repr}")
        if trace.stdout:
            parts.append(f"printed {trace.stdout.rstrip()!r}")
        return ", ".join(parts) or "ok, no value and no output"

    def counted(self) -> models.QuerySet[Annotation]:
        """The annotations that count toward ``required`` (skips do not)."""
        return self.annotations.exclude(decision=Annotation.SKIP)


class QueuePolicy(models.Model):
    """Staff's settings for one queue (the items of one model; ``model`` "" is the default for every
    model): annotations per item (overlap) and how long a claim lasts before the item is re-queued.
    Saving one applies it to the queue's items not yet adjudicated; items added later take it too.

    Bounds (``queue.set_policy`` refuses values outside them; ``queue.claim_timeout`` caps a timeout
    stored before them): an overlap past ``MAX_REQUIRED`` annotators an item is no labelling plan (two
    or three is the usual overlap), and a claim past ``MAX_CLAIM_MINUTES`` (a week) keeps an item from
    everyone for nothing; both fit the columns (PostgreSQL's integer holds 2,147,483,647 seconds)."""

    MAX_REQUIRED = 20
    MAX_CLAIM_MINUTES = 7 * 24 * 60

    model = models.CharField(max_length=200, unique=True, blank=True)
    required = models.PositiveIntegerField(default=1)
    claim_seconds = models.PositiveIntegerField(null=True, blank=True)  # None: the site's claim timeout

    def __str__(self) -> str:
        return f"queue {self.model or '(every model)'}"

    @classmethod
    def for_model(cls, model: str) -> QueuePolicy | None:
        """The policy of ``model``'s queue, else the default one, else None (the site settings)."""
        found = {p.model: p for p in cls.objects.filter(model__in=[model, ""])}
        return found.get(model) or found.get("")


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
