"""The web app's two consumers of the event stream, ``record`` (rows) and ``render`` (HTML), each keep
one table of handlers keyed by event type: a key that is not an event type (a renamed event) would
silently never run."""

from __future__ import annotations

from simulator.pipeline import EVENT_TYPES, FINAL_TYPES
from webapp.runs import record, render


def test_record_handles_only_real_event_types_and_every_ending() -> None:
    assert set(record.HANDLERS) <= set(EVENT_TYPES)
    assert set(record.HANDLERS) >= FINAL_TYPES  # each one ends the Run row


def test_render_handles_only_real_event_types_and_every_ending() -> None:
    assert set(render.HANDLERS) <= set(EVENT_TYPES)
    assert set(render.HANDLERS) >= FINAL_TYPES  # each one updates the status on the page
