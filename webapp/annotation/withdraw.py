"""Taking back out of the annotation queue what should never have gone in (issue 51, item 1).

Until ``privacy.shared_for_annotation`` learned that a user's own program ("Simulate my code" with a
public problem chosen: a solve run with ``Run.code``) is shared only when its author ticks "Share with
annotators", such runs were queued as the model's runs on a public problem are: every annotator could
open the pasted program and its simulation. ``withdraw_unshared`` deletes those items; a migration runs
it once. Staff who had named such a run to ``enqueue_annotations`` cannot be told apart from the bug:
the author's default (not shared) wins, and staff may add the run again by name, which now records the
opt-in in the run.

A withdrawn item may be the original of duplicates from shared runs (the same model wrote the same
program and text there: ``AnnotationItem.key_of``). The first of them takes its place, with its state
and annotations (the same task, so they hold for it and show nothing the shared run does not), and the
others become its duplicates: the task stays in the queue and no annotator's work on it is lost.
"""

from __future__ import annotations

from typing import Any

# What an original holds beyond the task itself, handed to the duplicate that takes its place.
_STATE = ("status", "decision", "required", "claim_seconds", "claimed_by_id", "claimed_at")


def withdraw_unshared(apps: Any) -> int:
    """Delete the queue items of runs whose candidate is their owner's pasted program and whose owner
    did not opt in; the number deleted. ``apps``: a migration's app registry (or ``django.apps.apps``)."""
    item_model = apps.get_model("annotation", "AnnotationItem")
    annotation_model = apps.get_model("annotation", "Annotation")
    adjudication_model = apps.get_model("annotation", "Adjudication")
    items = item_model.objects.exclude(run__code="").select_related("run").order_by("id")
    withdrawn = {item.pk for item in items if item.run.settings.get("annotate") is not True}
    for original in item_model.objects.filter(pk__in=withdrawn, duplicate_of=None):
        kept = original.duplicates.exclude(pk__in=withdrawn).order_by("id")
        heir = kept.first()
        if heir is None:
            continue
        for name in _STATE:
            setattr(heir, name, getattr(original, name))
        heir.duplicate_of = None
        heir.save()
        kept.exclude(pk=heir.pk).update(duplicate_of=heir)
        annotation_model.objects.filter(item=original).update(item=heir)
        adjudication_model.objects.filter(item=original).update(item=heir)
    deleted = item_model.objects.filter(pk__in=withdrawn).count()
    item_model.objects.filter(pk__in=withdrawn).delete()
    return deleted
