"""Annotation pages: the queue (filters, claim next), the review screen (the model's NLEX checked
claim by claim, the real trace beside it, the editable text re-verified as it is typed), undo,
staff adjudication of disagreements, agreement figures and the JSONL export (a page of filters)."""

from __future__ import annotations

import io
from typing import Any

from django.contrib import messages
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from simulator.annotations import STATUSES, ExportFilter
from webapp.accounts.roles import is_staff, role_required
from webapp.annotation import queue
from webapp.annotation.corrections import (
    apply_fix,
    changed_words,
    claim_edits,
    sentence_removals,
    value_fixes,
    word_diff,
)
from webapp.annotation.enqueue import enqueue_run, runs_to_add
from webapp.annotation.export import export_records, write_jsonl
from webapp.annotation.models import Annotation, AnnotationItem, QueuePolicy
from webapp.annotation.stats import item_agreement, overall_agreement
from webapp.explorer.context import viewer_context
from webapp.marks import marked_html
from webapp.params import BadNumber, bounded_int, object_id
from webapp.problems.models import Problem
from webapp.runs.models import Run
from webapp.runs.privacy import shared_for_annotation
from webapp.text import typed

annotator_required = role_required("annotator")
staff_required = role_required("staff")


def _posted_text(request: HttpRequest, default: str = "") -> str:
    """A textarea's text as typed (claims keep their offsets)."""
    return typed(request.POST.get("text", default))


def _filtered(url: str, filters: queue.Filters) -> str:
    """``url`` with the queue's filters in its query string (kept from page to page)."""
    query = filters.query()
    return url + (f"?{query}" if query else "")


def _next_url(filters: queue.Filters) -> str:
    """Where the queue's "Start reviewing" form posts (claiming is a POST)."""
    return _filtered(reverse("annotation:next"), filters)


def _queue_url(filters: queue.Filters) -> str:
    return _filtered(reverse("annotation:queue"), filters)


def _claim_next(request: HttpRequest, filters: queue.Filters) -> HttpResponse:
    """Claim the next free item for ``request.user`` (only ever in a POST) and open it; back to the
    queue when nothing is left."""
    item = queue.claim_next(request.user, filters)
    if item is None:
        messages.info(request, "Nothing left to review with these filters.")
        return redirect(_queue_url(filters))
    return redirect(_filtered(reverse("annotation:review", args=[item.pk]), filters))


@annotator_required
def queue_page(request: HttpRequest) -> HttpResponse:
    queue.release_expired()
    filters = queue.Filters.from_query(request.GET)
    items = filters.apply(
        AnnotationItem.objects.select_related("claimed_by", "problem").annotate(
            decided=Count("annotations", filter=~Q(annotations__decision=Annotation.SKIP))
        )
    )
    staff = is_staff(request.user)
    waiting = queue.waiting_for(request.user, filters)
    context = {
        "filters": filters,
        "items": items.exclude(status=AnnotationItem.DUPLICATE).order_by("status", "id")[:100],
        "duplicates": items.filter(status=AnnotationItem.DUPLICATE).count(),
        "waiting": waiting.count(),
        "free": waiting.filter(queue.free()).count(),
        "models": AnnotationItem.objects.order_by("model").values_list("model", flat=True).distinct(),
        # named with their number and owner: problems of one title (an imported benchmark's, a class's
        # exercise) are told apart
        "problems": Problem.objects.filter(annotation_items__isnull=False).distinct().select_related("owner"),
        "next_url": _next_url(filters),
        "claim_minutes": queue.claim_timeout(None) // 60,
        "is_staff": staff,
        "disputed": AnnotationItem.objects.filter(status=AnnotationItem.DISPUTED).count(),
    }
    if staff:
        context["runs_to_add"] = runs_to_add()
        context["policies"] = QueuePolicy.objects.order_by("model")
        required, claim_seconds = queue.policy_defaults(filters.model)
        context["default_required"] = required
        context["default_claim_minutes"] = (
            queue.claim_timeout(claim_seconds) // 60 if claim_seconds is not None else None
        )
        context["max_required"] = QueuePolicy.MAX_REQUIRED
        context["max_claim_minutes"] = QueuePolicy.MAX_CLAIM_MINUTES
    return render(request, "annotation/queue.html", context)


@annotator_required
@require_http_methods(["GET", "POST"])
def next_item(request: HttpRequest) -> HttpResponse:
    """POST (the queue's "Start reviewing" form): claim the next free item and open it. A GET claims
    nothing (a browser's prefetch, a crawler or a link preview would otherwise take items out of the
    queue): it shows the queue with the same filters, whose form claims."""
    filters = queue.Filters.from_query(request.GET)
    if request.method != "POST":
        return redirect(_queue_url(filters))
    return _claim_next(request, filters)


def _verdicts_context(item: AnnotationItem, text: str, *, fixes: bool = True) -> dict[str, Any]:
    """The verdicts fragment's context: ``text``'s claims checked against the real run, its word diff
    against the model's text, and (on the review screen) the one-click fixes of its false claims."""
    verification = item.verify(text)
    diff = word_diff(item.text, text)
    return {
        "item": item,
        "check": verification,
        "marked": marked_html(text, verification.claims),
        "diff": diff,
        "changed_words": changed_words(diff),
        "fixes": value_fixes(text, verification) if fixes else [],
        "removals": sentence_removals(text, verification) if fixes else [],
    }


def _review_page(request: HttpRequest, item: AnnotationItem, text: str) -> HttpResponse:
    """The review screen of ``item`` (which ``request.user`` holds) with ``text`` in the correction box."""
    filters = queue.Filters.from_query(request.GET)
    context = viewer_context(
        item.core_trace(), item.program(), model_text=item.text, status=item.exec_status,
        verification=item.verify(item.text),  # as checked when queued: not again on every view
    )  # fmt: skip
    context.update(_verdicts_context(item, text))
    context.update(
        {
            "text": text,
            "real_outcome": item.real_outcome(),
            "filters_query": filters.query(),
            "claim_minutes": queue.claim_timeout(item.claim_seconds) // 60,
            "done_count": queue.done_by(request.user),
            "can_undo": Annotation.objects.filter(annotator=request.user)
            .exclude(item__status=AnnotationItem.ADJUDICATED)
            .exists(),
        }
    )
    return render(request, "annotation/review.html", context)


def _held_or_redirect(
    request: HttpRequest, item: AnnotationItem, *, claim: bool = True
) -> HttpResponse | None:
    """None when ``request.user`` may work on ``item`` now; else where to go. With ``claim`` (a POST)
    the item is claimed for them if it is free; without (a GET) it must be theirs already, and a free
    one gets a page offering to claim it."""
    filters = queue.Filters.from_query(request.GET)
    if item.status == AnnotationItem.DUPLICATE:
        original = item.duplicate_of_id
        messages.info(request, f"Item {item.pk} is the same simulation as item {original}: annotate that.")
        return redirect("annotation:queue")
    if item.status != AnnotationItem.OPEN:
        messages.info(request, f"Item {item.pk} is already {item.status}.")
        return redirect("annotation:queue")
    if item.annotations.filter(annotator=request.user).exists():
        messages.info(request, f"You have already annotated item {item.pk}.")
        return redirect(_queue_url(filters))
    if claim and queue.claim(item, request.user) or not claim and queue.holds(item, request.user):
        return None
    if queue.held_by_another(item, request.user):
        messages.error(request, f"Item {item.pk} is being reviewed by someone else.")
        return redirect("annotation:queue")
    context = {
        "item": item,
        "filters_query": filters.query(),
        "claim_minutes": queue.claim_timeout(item.claim_seconds) // 60,
    }
    return render(request, "annotation/claim.html", context)


@annotator_required
@require_http_methods(["GET", "POST"])
def review(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the review screen of an item ``request.user`` holds (nothing is claimed; a free item's page
    offers to claim it). POST (that offer): claim the item, then show it."""
    item = get_object_or_404(AnnotationItem, pk=pk)
    if request.method == "POST":
        return _held_or_redirect(request, item, claim=True) or redirect(request.get_full_path())
    return _held_or_redirect(request, item, claim=False) or _review_page(request, item, item.text)


@annotator_required
@require_POST
def verify_text(request: HttpRequest, pk: int) -> HttpResponse:
    """htmx: the claim verdicts and the diff of the text as edited so far (nothing is saved)."""
    item = get_object_or_404(AnnotationItem, pk=pk)
    return render(request, "annotation/_verdicts.html", _verdicts_context(item, _posted_text(request)))


@annotator_required
@require_POST
def fix_claim(request: HttpRequest, pk: int) -> HttpResponse:
    """ "Use the trace's value" and "Remove this sentence" without JavaScript: the posted text with false
    claim ``fix`` (an index into its claims) given the real run's value, or its sentence removed, back
    on the review screen (nothing is saved; with JavaScript, review.js makes the same replacement in
    the box and htmx re-verifies it)."""
    item = get_object_or_404(AnnotationItem, pk=pk)
    elsewhere = _held_or_redirect(request, item)
    if elsewhere is not None:
        return elsewhere
    text = _posted_text(request, item.text)
    try:
        index = bounded_int(request.POST.get("fix"), low=0, high=10_000, name="fix")
    except BadNumber:
        index = None
    fix = next((f for f in claim_edits(text, item.verify(text)) if f.index == index), None)
    if fix is None:
        messages.info(request, "That claim has nothing to fix any more (the text changed?).")
    else:
        text = apply_fix(text, fix)
    return _review_page(request, item, text)


@annotator_required
@require_POST
def decide(request: HttpRequest, pk: int) -> HttpResponse:
    item = get_object_or_404(AnnotationItem, pk=pk)
    filters = queue.Filters.from_query(request.GET)
    decision = request.POST.get("decision", "")
    text = _posted_text(request, item.text)
    try:
        annotation = queue.submit(item, request.user, decision, text)
    except queue.NotHeld as exc:
        messages.error(request, f"Not saved: {exc}.")
        return redirect("annotation:queue")
    except ValueError as exc:
        messages.error(request, f"Not saved: {exc}.")
        return redirect(reverse("annotation:review", args=[item.pk]))
    if decision == Annotation.ACCEPT and not annotation.verified:
        why = annotation.verification.get("summary", "not verified")
        messages.warning(
            request,
            f"Item {item.pk} accepted, but the text is not verified ({why}): it is exported only with "
            "--status unverified/all.",
        )
    else:
        messages.success(request, f"Item {item.pk}: {decision}.")
    return _claim_next(request, filters)  # on to the next item: this POST claims it


@annotator_required
@require_POST
def undo(request: HttpRequest) -> HttpResponse:
    item = queue.undo(request.user)
    if item is None:
        messages.info(request, "Nothing to undo.")
        return redirect("annotation:queue")
    messages.info(request, f"Undone: item {item.pk} is back for review.")
    return redirect("annotation:review", pk=item.pk)


@staff_required
@require_POST
def enqueue(request: HttpRequest) -> HttpResponse:
    """Add the simulations of a run picked from the list (finished, shared for annotation)."""
    raw = request.POST.get("run", "").strip()
    run = Run.objects.filter(id=raw).select_related("problem").first() if _uuid(raw) else None
    if run is None:
        messages.error(request, "Pick a run from the list.")
        return redirect("annotation:queue")
    if not shared_for_annotation(run):
        messages.error(request, "That run is not shared for annotation (its author did not opt in).")
        return redirect("annotation:queue")
    report = enqueue_run(run)
    messages.success(request, f"Run {str(run.id)[:8]}: {report.summary()}.")
    return redirect("annotation:queue")


@staff_required
@require_POST
def set_policy(request: HttpRequest) -> HttpResponse:
    """Staff set a queue's overlap (annotations per item) and claim timeout (when a claimed item is
    re-queued), for its items already queued and those added later."""
    model = request.POST.get("model", "")
    try:
        required = (
            bounded_int(  # blank: 0, which set_policy refuses with the same bounds
                request.POST.get("required"),
                low=1,
                high=QueuePolicy.MAX_REQUIRED,
                name="annotations per item",
            )
            or 0
        )
        minutes = bounded_int(
            request.POST.get("claim_minutes"), low=1, high=QueuePolicy.MAX_CLAIM_MINUTES, name="claim minutes"
        )
        report = queue.set_policy(model, required, minutes)
    except ValueError as exc:  # BadNumber is one
        messages.error(request, f"Not saved: {exc}.")
        return redirect("annotation:queue")
    messages.success(request, report.summary())
    return redirect("annotation:queue")


def _uuid(value: Any) -> bool:
    import uuid

    try:
        uuid.UUID(str(value).strip())
    except ValueError:
        return False
    return True


@staff_required
@require_GET
def adjudication_list(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", AnnotationItem.DISPUTED)
    items = AnnotationItem.objects.filter(status=status).prefetch_related("annotations__annotator")
    rows = [{"item": item, "agreement": item_agreement(item)} for item in items[:200]]
    return render(request, "annotation/adjudication_list.html", {"rows": rows, "status": status})


@staff_required
def adjudicate(request: HttpRequest, pk: int) -> HttpResponse:
    item = get_object_or_404(AnnotationItem, pk=pk)
    annotations = list(item.annotations.exclude(decision=Annotation.SKIP).select_related("annotator"))
    if request.method == "POST":
        decision = request.POST.get("decision", "")
        picked = object_id(request.POST.get("chosen"))
        chosen = next((a for a in annotations if a.pk == picked), None)
        text = _posted_text(request) or (chosen.text if chosen else item.text)
        try:
            queue.adjudicate(item, request.user, decision, text, chosen, request.POST.get("note", ""))
        except ValueError as exc:
            messages.error(request, f"Not saved: {exc}.")
            return redirect("annotation:adjudicate", pk=item.pk)
        messages.success(request, f"Item {item.pk} adjudicated: {decision}.")
        return redirect("annotation:adjudication")
    rows = []
    for a in annotations:
        check = item.verify(a.text)
        rows.append({"annotation": a, "marked": marked_html(a.text, check.claims), "check": check})
    context = viewer_context(
        item.core_trace(), item.program(), model_text=item.text, status=item.exec_status,
        verification=item.verify(item.text),  # as checked when queued: not again on every view
    )  # fmt: skip
    start = annotations[0].text if annotations else item.text
    context.update(_verdicts_context(item, start, fixes=False))
    context.update({"rows": rows, "agreement": item_agreement(item), "real_outcome": item.real_outcome()})
    return render(request, "annotation/adjudicate.html", context)


@staff_required
@require_POST
def adjudicate_verify(request: HttpRequest, pk: int) -> HttpResponse:
    """htmx: the verdicts and diff of the adjudicator's replacement text as typed (nothing is saved)."""
    item = get_object_or_404(AnnotationItem, pk=pk)
    picked = object_id(request.POST.get("chosen"))
    chosen = item.annotations.filter(pk=picked).first() if picked is not None else None
    text = _posted_text(request) or (chosen.text if chosen else item.text)  # what accept would export
    context = _verdicts_context(item, text, fixes=False)
    return render(request, "annotation/_verdicts.html", context)


@annotator_required
@require_GET
def stats(request: HttpRequest) -> HttpResponse:
    items = AnnotationItem.objects.prefetch_related("annotations__annotator")
    overall = overall_agreement(items)
    counts = {s: AnnotationItem.objects.filter(status=s).count() for s, _ in AnnotationItem.STATUSES}
    return render(request, "annotation/stats.html", {"overall": overall, "counts": counts})


@staff_required
@require_GET
def export_page(request: HttpRequest) -> HttpResponse:
    """The export, filtered as Argilla and Label Studio filter theirs: by verification status, queue and
    the days items were decided; how many records match, the download, the same from the command line."""
    context: dict[str, Any] = {
        "statuses": STATUSES,
        "models": AnnotationItem.objects.order_by("model").values_list("model", flat=True).distinct(),
        "form": {key: request.GET.get(key, "") for key in ("status", "model", "since", "until")},
    }
    try:
        keep = ExportFilter.from_query(request.GET)
    except ValueError as exc:
        context["error"] = str(exc)
        return render(request, "annotation/export.html", context, status=400)
    context.update({"filter": keep, "count": sum(1 for _ in export_records(keep))})
    return render(request, "annotation/export.html", context)


@staff_required
@require_GET
def export(request: HttpRequest) -> HttpResponse:
    """The JSONL download of the export page's filter (``?status=&model=&since=&until=``)."""
    try:
        keep = ExportFilter.from_query(request.GET)
    except ValueError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    out = io.StringIO()
    write_jsonl(out, keep)
    response = HttpResponse(out.getvalue(), content_type="application/jsonl; charset=utf-8")
    name = "-".join(
        ["annotations", keep.status, *(slugify(v) for k, v in keep.query().items() if k != "status")]
    )
    response["Content-Disposition"] = f'attachment; filename="{name}.jsonl"'
    return response
