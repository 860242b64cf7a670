"""The runs app: connects what happens when a run ends."""

from __future__ import annotations

from django.apps import AppConfig

from webapp.runs.signals import run_ended


class RunsConfig(AppConfig):
    name = "webapp.runs"
    label = "runs"

    def ready(self) -> None:
        """Hang "Run for real asked for during a run starts when it ends" on ``run_ended``."""
        # Imported here, not at the top: runner imports the models (through tasks), which Django loads
        # only once the app registry is ready, i.e. after this module is imported.
        from webapp.runs import runner

        run_ended.connect(runner.start_pending_real, dispatch_uid="runs.start_pending_real")
