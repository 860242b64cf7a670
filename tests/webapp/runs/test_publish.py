"""Broadcasting a recorded event: its HTML is rendered once, by the recording process, for the owner's
page and (when it differs) for share-link readers; the consumers forward it (webapp.runs.live)."""

from __future__ import annotations

from typing import Any

import pytest

from webapp.runs.record import record_and_publish
from webapp.runs.render import render_event

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sent(monkeypatch) -> list[dict[str, Any]]:
    """Captures what is broadcast to the runs' Channels groups."""
    messages: list[dict[str, Any]] = []
    monkeypatch.setattr("webapp.broadcast.group_send", lambda group, message: messages.append(message))
    return messages


def _event(run, seq, type_, **payload):
    return {"run_id": str(run.id), "seq": seq, "type": type_, "payload": payload}


def test_the_broadcast_carries_the_rendered_html_for_both_kinds_of_viewer(make_run, sent) -> None:
    run = make_run(status="running", settings={"k": 1, "turns": 0})
    started = _event(run, 0, "run_started", problem={}, settings={}, provenance={"model": "m"})
    delta = _event(run, 1, "candidate_delta", candidate=0, text="<b>x</b>")
    assert record_and_publish(run.id, started) and record_and_publish(run.id, delta)

    status, streamed = sent
    assert status["html"] == render_event(run.id, started)
    assert status["html_readonly"] == render_event(run.id, started, readonly=True)
    assert 'data-testid="cancel-run"' in status["html"]
    assert 'data-testid="cancel-run"' not in status["html_readonly"]
    assert "html_readonly" not in streamed  # the same for everyone
    assert "&lt;b&gt;x&lt;/b&gt;" in streamed["html"] and 'data-seq="1"' in streamed["html"]


def test_an_event_that_cannot_be_rendered_is_still_broadcast(make_run, sent, monkeypatch) -> None:
    run = make_run(status="running", settings={"k": 1, "turns": 0})

    def broken(*args: Any) -> Any:
        raise RuntimeError("template error")

    monkeypatch.setattr("webapp.runs.record.render_message", broken)
    assert record_and_publish(run.id, _event(run, 0, "candidate_delta", candidate=0, text="x"))
    assert sent[0]["event"]["seq"] == 0 and "html" not in sent[0]  # each server process renders it
