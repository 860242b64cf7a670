"""The run page renders its rows and its resume point (``last_seq``, where the page's WebSocket
replays from) from one snapshot. Regression: an event recorded while the page was being built was
shown and then replayed on top, so streamed text appeared twice after a reload (found by the browser
test of reloading mid-run)."""

from __future__ import annotations

import re
import threading

import pytest

from webapp.runs import views
from webapp.runs.models import Candidate, Run
from webapp.runs.record import record_and_publish

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_event_recorded_while_the_page_is_built_is_not_shown_twice(client, alice, make_run, monkeypatch):
    run = make_run(status=Run.RUNNING)
    record_and_publish(
        run.id,
        {
            "run_id": str(run.id),
            "seq": 0,
            "type": "candidate_delta",
            "payload": {"candidate": 0, "text": "first "},
        },
    )
    recorder = threading.Thread(
        target=record_and_publish,
        args=(
            run.id,
            {
                "run_id": str(run.id),
                "seq": 1,
                "type": "candidate_delta",
                "payload": {"candidate": 0, "text": "second"},
            },
        ),
    )
    build = views.run_context

    def build_while_the_task_records(run_arg, **kwargs):
        recorder.start()
        recorder.join(timeout=1.0)  # the task records seq 1 now, unless the page holds it off
        return build(run_arg, **kwargs)

    monkeypatch.setattr(views, "run_context", build_while_the_task_records)
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    recorder.join(timeout=10)

    shown_seq = int(re.search(r'id="run-seq" data-seq="(-?\d+)"', page).group(1))
    shown_text = re.search(r'id="cand-0-text"[^>]*>([^<]*)<', page).group(1)
    recorded = {0: "first ", 1: "first second"}
    # Whatever the page shows must be exactly the text up to the seq it resumes after.
    assert shown_text == recorded[shown_seq]
    assert Candidate.objects.get(run=run, index=0).text == "first second"
