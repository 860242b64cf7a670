"""Signals of the runs app, so that what reacts to a run's end (here and in other apps) is not imported
by the code that ends it."""

from __future__ import annotations

from django.dispatch import Signal

# Sent once a run's final event (run_finished, run_failed, run_cancelled) is recorded and broadcast,
# whoever ended it: the pipeline, the task on a crash or an ignored cancel, the cancel view, or the reaper
# (``record.reap_stale_runs``: a worker that stopped sending heartbeats). ``run`` is the ended Run row.
# Receivers: ``runner.start_pending_real`` (a Run for real asked for during the run starts now) and the
# annotation app (a finished run's simulations join its queue).
run_ended = Signal()
