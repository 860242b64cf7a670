"""``manage.py reap_runs``: mark failed every running run whose worker stopped sending heartbeats.

Pages already do this whenever runs are read; this command makes it periodic without a browser open
(the Procfile's ``reaper`` runs it every 30 s)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from webapp.runs.record import reap_stale_runs


class Command(BaseCommand):
    help = "Mark runs whose worker stopped responding as failed."

    def handle(self, *args: Any, **options: Any) -> str:
        reaped = reap_stale_runs()
        return f"marked {len(reaped)} stale run(s) failed" if reaped else ""
