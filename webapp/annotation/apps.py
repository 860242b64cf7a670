from __future__ import annotations

import logging

from django.apps import AppConfig

log = logging.getLogger(__name__)


class AnnotationConfig(AppConfig):
    name = "webapp.annotation"
    label = "annotation"

    def ready(self) -> None:
        from webapp.runs.signals import run_ended

        run_ended.connect(enqueue_finished_run, dispatch_uid="annotation.enqueue_finished_run")


def enqueue_finished_run(sender: object, run: object, **kwargs: object) -> None:
    """A finished run's simulations join the annotation queue, checked against their real traces. A
    failure here is logged: it must never fail the run that was just recorded."""
    from webapp.annotation.enqueue import enqueue_run
    from webapp.runs.privacy import shared_for_annotation

    if getattr(run, "status", None) != run.FINISHED or not shared_for_annotation(run):
        return
    try:
        report = enqueue_run(run)
        log.info("run %s: %d simulations queued for annotation", run.pk, report.created)
    except Exception:
        log.exception("run %s: could not queue its simulations for annotation", run.pk)
