"""Signals other apps listen to, so the runs app does not import them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent by the task after a run's final event is recorded; ``run`` is the Run row.
run_ended = Signal()
