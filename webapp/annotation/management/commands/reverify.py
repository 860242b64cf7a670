"""``manage.py reverify``: check every stored simulation and annotation again with the one verifier
(``webapp.annotation.reverify``) and print how many verdicts changed. Nothing is deleted."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from rich.progress import Progress

from webapp.annotation.reverify import reverify


class Command(BaseCommand):
    help = "Re-verify stored simulations and annotation items; report how many verdicts changed."

    def handle(self, *args: Any, **options: Any) -> str:
        with Progress(transient=True) as bar:
            tasks: dict[str, Any] = {}

            def progress(what: str, done: int, total: int) -> None:
                if what not in tasks:
                    tasks[what] = bar.add_task(f"re-verifying {what}", total=total)
                bar.update(tasks[what], completed=done)

            report = reverify(progress)
        return "\n".join(report.lines()) or "nothing stored to re-verify"
