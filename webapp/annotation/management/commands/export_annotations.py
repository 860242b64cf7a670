"""``python manage.py export_annotations --out FILE [--status verified|unverified|all]``: accepted
corrections as JSONL in the format training/ reads (docs/annotation.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from simulator.annotations import STATUSES
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

    def handle(self, *args: Any, **options: Any) -> None:
        if options["out"] == "-":
            count = write_jsonl(sys.stdout, options["status"])
        else:
            path = Path(options["out"])
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as handle:
                count = write_jsonl(handle, options["status"])
        self.stderr.write(f"wrote {count} record(s) ({options['status']}) to {options['out']}")
