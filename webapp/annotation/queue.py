"""Claiming queue items so that two annotators never hold the same one, and recording decisions.

An item is *free* when nobody holds it or its holder's claim is older than the claim timeout (the
item's ``claim_seconds``, else the site's ``EXECSIM_ANNOTATION_CLAIM_SECONDS``): a claim that timed out
goes back to the queue without any sweeper. Claiming is a row lock taken with
``SELECT ... FOR UPDATE SKIP LOCKED`` (concurrent annotators skip each other's candidates) followed by
a conditional ``UPDATE ... WHERE <still free>``: the update changes one row only if nobody claimed it
in between, so at most one claimer ever wins, on any database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from simulator.agreement import edited_spans
from simulator.prompts import simulate
from webapp.annotation.models import Adjudication, Annotation, AnnotationItem, QueuePolicy
from webapp.params import object_id


class NotHeld(Exception):
    """The item is held by someone else (or already has enough annotations)."""


@dataclass
class Filters:
    model: str = ""
    problem: int | None = None
    divergent: bool = False
    narrated: bool = False  # only simulations that narrate (not answers asked for at once)

    @classmethod
    def from_query(cls, query: Any) -> Filters:
        """The filters a query string names; a problem that is not a key (``²``, 5,000 digits) filters
        nothing, as an absent one does."""
        return cls(
            model=query.get("model", "") or "",
            problem=object_id(query.get("problem")),
            divergent=query.get("divergent") in ("1", "on", "true"),
            narrated=query.get("narrated") in ("1", "on", "true"),
        )

    def apply(self, items: QuerySet[AnnotationItem]) -> QuerySet[AnnotationItem]:
        if self.model:
            items = items.filter(model=self.model)
        if self.problem is not None:
            items = items.filter(problem_id=self.problem)
        if self.divergent:
            items = items.filter(divergent=True)
        if self.narrated:
            items = items.exclude(text__startswith=simulate.EMPTY_THOUGHT)
        return items

    def query(self) -> str:
        parts = []
        if self.model:
            parts.append(("model", self.model))
        if self.problem is not None:
            parts.append(("problem", str(self.problem)))
        if self.divergent:
            parts.append(("divergent", "1"))
        if self.narrated:
            parts.append(("narrated", "1"))
        from urllib.parse import urlencode

        return urlencode(parts)


def claim_timeout(seconds: int | None) -> int:
    """How long a claim lasts, in seconds: ``seconds`` (an item's or a policy's ``claim_seconds``), else
    the site's ``EXECSIM_ANNOTATION_CLAIM_SECONDS``, at most ``QueuePolicy.MAX_CLAIM_MINUTES``. The cap
    also holds for a value stored before ``set_policy`` had bounds: embedded mode kept
    ``claim_minutes=2000000000``, whose timedelta took ``now`` below year 1 and failed every queue
    page for everyone (issue 51, item 13)."""
    return min(seconds or settings.EXECSIM_ANNOTATION_CLAIM_SECONDS, QueuePolicy.MAX_CLAIM_MINUTES * 60)


def cutoff(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(seconds=claim_timeout(None))


def _stored_timeouts() -> list[int]:
    """The distinct ``claim_seconds`` of the queued items (a handful: one per queue policy)."""
    timeouts = (
        AnnotationItem.objects.exclude(claim_seconds=None)
        .order_by()
        .values_list("claim_seconds", flat=True)
        .distinct()
    )
    return [seconds for seconds in timeouts if seconds is not None]


def expired(now: datetime | None = None) -> Q:
    """Claims past their timeout (``claim_timeout``): the item's own ``claim_seconds`` (set by staff per
    queue), else the site's ``EXECSIM_ANNOTATION_CLAIM_SECONDS``. One condition per distinct timeout,
    which every database compares alike (SQLite cannot multiply a column into an interval)."""
    now = now or timezone.now()
    condition = Q(claim_seconds__isnull=True, claimed_at__lt=cutoff(now))
    for seconds in _stored_timeouts():
        limit = now - timedelta(seconds=claim_timeout(seconds))
        condition |= Q(claim_seconds=seconds, claimed_at__lt=limit)
    return condition


def free(now: datetime | None = None) -> Q:
    return Q(claimed_by__isnull=True) | expired(now)


def waiting_for(user: Any, filters: Filters | None = None) -> QuerySet[AnnotationItem]:
    """Open items ``user`` has not annotated (or skipped) yet, filtered."""
    items = AnnotationItem.objects.filter(status=AnnotationItem.OPEN).exclude(annotations__annotator=user)
    return (filters or Filters()).apply(items)


def holds(item: AnnotationItem, user: Any) -> bool:
    if item.claimed_by_id != user.pk or item.claimed_at is None:
        return False
    return item.claimed_at >= timezone.now() - timedelta(seconds=claim_timeout(item.claim_seconds))


def held_by_another(item: AnnotationItem, user: Any) -> bool:
    """Whether someone other than ``user`` holds ``item`` now (a claim not yet timed out)."""
    if item.claimed_by_id in (None, user.pk) or item.claimed_at is None:
        return False
    return item.claimed_at >= timezone.now() - timedelta(seconds=claim_timeout(item.claim_seconds))


def claim(item: AnnotationItem, user: Any) -> bool:
    """Claim (or renew the claim on) ``item`` for ``user``: True unless someone else holds it. An
    annotator holds one item at a time: a successful claim gives back any other item they held (after
    a skip and an undo, or a second tab), so nobody keeps items out of the queue they are not
    looking at."""
    now = timezone.now()
    updated = AnnotationItem.objects.filter(
        Q(pk=item.pk) & (free(now) | Q(claimed_by=user)) & Q(status=AnnotationItem.OPEN)
    ).update(claimed_by=user, claimed_at=now)
    if updated:
        item.claimed_by, item.claimed_at = user, now
        AnnotationItem.objects.filter(claimed_by=user).exclude(pk=item.pk).update(
            claimed_by=None, claimed_at=None
        )
    return bool(updated)


def claim_next(user: Any, filters: Filters | None = None) -> AnnotationItem | None:
    """The item ``user`` already holds, else the first free waiting item, claimed; None when empty."""
    mine = waiting_for(user, filters).filter(claimed_by=user).exclude(expired()).first()
    if mine is not None:
        return mine
    for _ in range(10):  # lost a race: another annotator took the row between SELECT and UPDATE
        now = timezone.now()
        with transaction.atomic():
            item = (
                waiting_for(user, filters)
                .filter(free(now))
                .order_by("id")
                .select_for_update(skip_locked=True, of=("self",))
                .first()
            )
            if item is None:
                return None
            if claim(item, user):
                return item
    return None


def release(item: AnnotationItem, user: Any) -> None:
    AnnotationItem.objects.filter(pk=item.pk, claimed_by=user).update(claimed_by=None, claimed_at=None)


def release_expired() -> int:
    """Clear timed-out claims (they are already free for claiming; this only tidies the display)."""
    return AnnotationItem.objects.filter(expired()).update(claimed_by=None, claimed_at=None)


def done_by(user: Any) -> int:
    """How many items ``user`` has decided (accepted or rejected): skips are not work done."""
    return Annotation.objects.filter(annotator=user).exclude(decision=Annotation.SKIP).count()


@dataclass
class PolicyReport:
    """What saving a queue's settings did, counted as the queue page lists items: its items, those set
    aside as duplicates apart (the page lists them apart too; they follow their originals and are
    never served), adjudicated ones apart (listed, but staff's decision stands)."""

    model: str
    required: int
    claim_minutes: int  # how long a claim now lasts (the site's timeout where none was given)
    site_minutes: bool = False  # the claim time is the site's (no claim minutes given)
    listed: int = 0  # the queue's items, duplicates apart: what the queue page lists of this queue
    updated: int = 0  # of those, the ones that take the settings (not adjudicated)
    adjudicated: int = 0
    duplicates: int = 0
    own_queues: int = 0  # the default policy only: models whose queue has a policy of its own
    moved: dict[tuple[str, str], int] = field(default_factory=dict)  # (status before, after): items

    def summary(self) -> str:
        """The message staff read: the settings, then what they did to the items the queue lists."""
        claim = f"{self.claim_minutes} min" + (" (the site's)" if self.site_minutes else "")
        head = (
            f"Queue {self.model or 'every model'}: {_n(self.required, 'annotation')} per item, "
            f"claims last {claim}."
        )
        if not self.listed:
            return f"{head} No item queued yet: items added later take these settings."
        own = f"{self.own_queues} {'has' if self.own_queues == 1 else 'have'} theirs"
        whose = f" (models without settings of their own; {own})" if self.own_queues else ""
        if self.adjudicated:
            kept = _n(self.adjudicated, "adjudicated item") + (" keeps" if self.adjudicated == 1 else " keep")
            items = f"{self.updated} of its {self.listed} items{whose} take them ({kept} staff's decision)"
        else:
            items = f"Its {_n(self.listed, 'item')}{whose} {'takes' if self.listed == 1 else 'take'} them"
        moves = [
            f"{_n(n, f'{before} item')} "
            + ("reopened for more annotations" if after == "open" else f"now {after}")
            for (before, after), n in sorted(self.moved.items())
        ]
        aside = f" {_n(self.duplicates, 'duplicate')} set aside (not listed) follow their originals."
        return f"{head} {items}: {'; '.join(moves) or 'no status changed'}.{aside if self.duplicates else ''}"


def _n(count: int, noun: str) -> str:
    """``count noun``, the noun plural unless ``count`` is 1 ("1 item", "2 items")."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def set_policy(model: str, required: int, claim_minutes: int | None) -> PolicyReport:
    """Staff's settings for the queue of ``model`` ("" for every model): ``required`` annotations per
    item and claims re-queued after ``claim_minutes`` (None: the site's timeout). Saved for items added
    later and applied now to the queue's items not yet adjudicated, whose status follows (raising the
    overlap reopens a done item; lowering it can finish an open one). Returns what changed, counted as
    the queue page lists items (``PolicyReport``). Raises ValueError, saving nothing, when either is
    out of ``QueuePolicy``'s bounds."""
    if not 1 <= required <= QueuePolicy.MAX_REQUIRED:
        raise ValueError(f"annotations per item must be a whole number from 1 to {QueuePolicy.MAX_REQUIRED}")
    if claim_minutes is not None and not 1 <= claim_minutes <= QueuePolicy.MAX_CLAIM_MINUTES:
        raise ValueError(f"claim minutes must be a whole number from 1 to {QueuePolicy.MAX_CLAIM_MINUTES}")
    seconds = claim_minutes * 60 if claim_minutes is not None else None
    QueuePolicy.objects.update_or_create(
        model=model, defaults={"required": required, "claim_seconds": seconds}
    )
    report = PolicyReport(
        model, required, claim_timeout(seconds) // 60, site_minutes=seconds is None
    )  # fmt: skip
    items = AnnotationItem.objects.all()
    if model:
        items = items.filter(model=model)
    else:  # the default policy: every queue that has no policy of its own
        own = QueuePolicy.objects.exclude(model="").values("model")
        report.own_queues = AnnotationItem.objects.filter(model__in=own).values("model").distinct().count()
        items = items.exclude(model__in=own)
    report.adjudicated = items.filter(status=AnnotationItem.ADJUDICATED).count()
    with transaction.atomic():
        for item in items.exclude(status=AnnotationItem.ADJUDICATED).select_for_update():
            before = item.status
            item.required, item.claim_seconds = required, seconds
            item.save(update_fields=["required", "claim_seconds"])
            refresh_status(item)
            if before == AnnotationItem.DUPLICATE:
                report.duplicates += 1
                continue
            report.updated += 1
            if item.status != before:
                report.moved[(before, item.status)] = report.moved.get((before, item.status), 0) + 1
    report.listed = report.updated + report.adjudicated
    return report


def policy_defaults(model: str) -> tuple[int, int | None]:
    """``(required, claim_seconds)`` for a new item of ``model``'s queue."""
    policy = QueuePolicy.for_model(model)
    if policy is None:
        return settings.EXECSIM_ANNOTATIONS_PER_ITEM, None
    return policy.required, policy.claim_seconds


def refresh_status(item: AnnotationItem) -> None:
    """open / done / disputed from the counted annotations (adjudicated items keep staff's decision,
    duplicates stay set aside)."""
    if item.status in (AnnotationItem.ADJUDICATED, AnnotationItem.DUPLICATE):
        return
    decisions = list(item.counted().values_list("decision", flat=True))
    if len(decisions) < item.required:
        item.status, item.decision = AnnotationItem.OPEN, ""
    elif len(set(decisions)) == 1:
        item.status, item.decision = AnnotationItem.DONE, decisions[0]
    else:
        item.status, item.decision = AnnotationItem.DISPUTED, ""
    item.save(update_fields=["status", "decision"])


def submit(item: AnnotationItem, user: Any, decision: str, text: str) -> Annotation:
    """Record ``user``'s decision on ``item`` (which they must hold, or be able to claim now): the
    text is verified against the real trace, and for each claim of the model's text whether it was
    edited. Raises NotHeld when another annotator holds the item."""
    if decision not in (Annotation.ACCEPT, Annotation.REJECT, Annotation.SKIP):
        raise ValueError(f"unknown decision {decision!r}")
    with transaction.atomic():
        locked = AnnotationItem.objects.select_for_update().get(pk=item.pk)
        if not holds(locked, user) and not claim(locked, user):
            raise NotHeld("another annotator holds this item")
        if locked.annotations.filter(annotator=user).exists():
            raise NotHeld("you have already annotated this item")
        if decision == Annotation.SKIP:
            summary, edited = {}, []
        else:
            summary = locked.verify(text).to_dict()
            edited = edited_spans(locked.text, text, locked.claim_spans())
        annotation = Annotation.objects.create(
            item=locked,
            annotator=user,
            decision=decision,
            text=text,
            verification=summary,
            edited_claims=edited,
        )
        locked.claimed_by, locked.claimed_at = None, None
        locked.save(update_fields=["claimed_by", "claimed_at"])
        refresh_status(locked)
    return annotation


def undo(user: Any) -> AnnotationItem | None:
    """Take back ``user``'s latest annotation (not on an adjudicated item) and give them the item
    back if nobody else holds it; the item they were holding meanwhile goes back to the queue (one
    item claimed at a time, see ``claim``). Returns the item, or None when there is nothing to undo."""
    with transaction.atomic():
        last = (
            Annotation.objects.select_for_update()
            .filter(annotator=user)
            .exclude(item__status=AnnotationItem.ADJUDICATED)
            .order_by("-created_at", "-id")
            .first()
        )
        if last is None:
            return None
        item = last.item
        last.delete()
        refresh_status(item)
        if not claim(item, user):  # someone else holds it now: at least hold nothing else
            AnnotationItem.objects.filter(claimed_by=user).update(claimed_by=None, claimed_at=None)
    return item


def adjudicate(
    item: AnnotationItem, staff: Any, decision: str, text: str, chosen: Annotation | None, note: str = ""
) -> Adjudication:
    """Staff's final decision: replaces any earlier adjudication; the export follows it."""
    if decision not in (Annotation.ACCEPT, Annotation.REJECT):
        raise ValueError("decide accept or reject")
    summary = item.verify(text).to_dict() if decision == Annotation.ACCEPT else {}
    with transaction.atomic():
        Adjudication.objects.filter(item=item).delete()
        adjudication = Adjudication.objects.create(
            item=item,
            adjudicator=staff,
            decision=decision,
            chosen=chosen,
            text=text,
            verification=summary,
            note=note,
        )
        item.status, item.decision = AnnotationItem.ADJUDICATED, decision
        item.claimed_by = item.claimed_at = None
        item.save(update_fields=["status", "decision", "claimed_by", "claimed_at"])
    return adjudication
