"""``python manage.py export_annotations --out FILE [--status verified|unverified|all] [--model M]
[--since YYYY-MM-DD] [--until YYYY-MM-DD]``: accepted corrections as JSONL in the format training/
reads (docs/annotation.md), filtered as the export page filters them (``ExportFilter``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulator.annotations import STATUSES, ExportFilter
from webapp.annotation.export import write_jsonl


class Command(BaseCommand):
    help = "Export accepted annotation corrections as JSONL (prompt, completion, source_run, model, ...)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", required=True, help="the JSONL file to write ('-' for stdout)")
        parser.add_argument(
            "--status",
            choices=STATUSES,
            default="verified",
            help="keep records whose verification passed (verified, default), failed, or all",
        )
        parser.add_argument("--model", default="", help="one queue: the items of this model (default: all)")
        parser.add_argument("--since", default="", help="items decided on or after this day (YYYY-MM-DD)")
        parser.add_argument("--until", default="", help="items decided on or before this day (YYYY-MM-DD)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            keep = ExportFilter.parse(options["status"], options["model"], options["since"], options["until"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if options["out"] == "-":
            count = write_jsonl(sys.stdout, keep)
        else:
            path = Path(options["out"])
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as handle:
                count = write_jsonl(handle, keep)
        self.stderr.write(f"wrote {count} record(s) ({keep.describe()}) to {options['out']}")
