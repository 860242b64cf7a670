"""``python manage.py enqueue_annotations [RUN_ID ...] [--all]``: put runs' finished simulations in
the annotation queue (each is checked against a real trace run here)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from webapp.annotation.enqueue import enqueue_run
from webapp.runs.models import Run
from webapp.runs.privacy import shared_for_annotation


class Command(BaseCommand):
    help = "Add runs' simulations to the annotation queue."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("runs", nargs="*", help="run ids")
        parser.add_argument("--all", action="store_true", help="every finished run shared with annotators")
        parser.add_argument("--required", type=int, default=None, help="annotators per item")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["all"]:  # the runs shared with annotators (named ones are opted in by naming them)
            runs = [r for r in Run.objects.filter(status=Run.FINISHED) if shared_for_annotation(r)]
        elif options["runs"]:
            runs = list(Run.objects.filter(id__in=options["runs"]))
            if len(runs) != len(set(options["runs"])):
                raise CommandError("some run ids were not found")
            for run in runs:  # named on purpose: shared, and the run says so (``shared_for_annotation``)
                if run.settings.get("annotate") is not True:
                    run.settings = {**run.settings, "annotate": True}
                    run.save(update_fields=["settings"])
        else:
            raise CommandError("give run ids or --all")
        for run in runs:
            report = enqueue_run(run, required=options["required"])
            self.stdout.write(f"{run.id}: {report.summary()}")
            for reason in report.skipped:
                self.stdout.write(f"  skipped {reason}")
