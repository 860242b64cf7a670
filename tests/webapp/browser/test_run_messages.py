"""static/js/run.js with messages that carry several events (a viewer that fell behind gets what it
missed in one message, webapp/runs/live.py): each event in a message is applied, in order; a message
already applied is dropped; one applied only in part is dropped and the page reconnects from its seq.
The page's WebSocket is Playwright's mock (``page.route_web_socket``), so the messages are exactly these.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.webapp.browser.flows import wait_until
from webapp.runs.render import seq_marker

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _delta(seq: int, text: str) -> str:
    """One candidate_delta event's message, as webapp.runs.render writes it."""
    return f'<div hx-swap-oob="beforeend:#cand-0-text">{text}</div>\n{seq_marker(seq)}'


def _wait_sockets(page: Any, sockets: list[Any], count: int) -> None:
    deadline = time.monotonic() + 20
    while len(sockets) < count and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert len(sockets) == count


def _wait_seq(page: Any, seq: int) -> None:
    wait_until(page, f"document.getElementById('run-seq').getAttribute('data-seq') === '{seq}'")


def test_a_message_of_several_events_applies_each_once_in_order(fake_site, page_for, alice, make_run):
    run = make_run(status="running", settings={"k": 1, "turns": 0})
    sockets: list[Any] = []
    page = page_for(fake_site, alice)
    page.route_web_socket(re.compile(r"/ws/runs/"), lambda ws: sockets.append(ws))
    page.goto(f"{fake_site}/runs/{run.id}/")
    _wait_sockets(page, sockets, 1)
    assert "last_seq=-1" in sockets[0].url
    text = page.locator("#cand-0-text")

    sockets[0].send("\n".join([_delta(0, "a"), _delta(1, "b"), _delta(2, "c")]))
    _wait_seq(page, 2)
    assert text.text_content() == "abc"

    sockets[0].send("\n".join([_delta(1, "b"), _delta(2, "c")]))  # all on the page: dropped
    sockets[0].send("\n".join([_delta(2, "c"), _delta(3, "d")]))  # partly: dropped, and reconnect
    _wait_sockets(page, sockets, 2)
    assert "last_seq=2" in sockets[1].url
    assert text.text_content() == "abc"

    sockets[1].send("\n".join([_delta(3, "d"), _delta(4, "e")]))
    _wait_seq(page, 4)
    assert text.text_content() == "abcde"
    assert page.errors == []


def test_a_program_known_to_fail_says_why_in_its_card_live_and_on_reload(
    fake_site, page_for, alice, make_run
):
    """A program judged wrong without a simulation (simulator.pipeline.static) has no simulation to
    show, so its card says why instead; the slot is visible, not hidden as an empty one is."""
    from webapp.runs.models import Candidate, RunEvent
    from webapp.runs.record import apply_event
    from webapp.runs.render import render_event

    run = make_run(status="running", settings={"k": 1, "turns": 0})
    Candidate.objects.create(run=run, index=0, code="def f(n):\n    return n * n\n", done=True)
    reason = "the program never writes to standard output (no print), and every public test expects output"
    payload = {"candidate": 0, "test": 0, "turn": 0, "expected": "9", "source": "checked",
               "simulated": None, "match": False, "reason": reason}  # fmt: skip
    sockets: list[Any] = []
    page = page_for(fake_site, alice)
    page.route_web_socket(re.compile(r"/ws/runs/"), lambda ws: sockets.append(ws))
    page.goto(f"{fake_site}/runs/{run.id}/")
    _wait_sockets(page, sockets, 1)
    shown = page.locator("#cand-0 [data-testid=simulation-checked]")
    assert shown.count() == 0

    apply_event(run, "verdict", payload)
    RunEvent.objects.create(run=run, seq=0, type="verdict", payload=payload)
    sockets[0].send(render_event(run, {"seq": 0, "type": "verdict", "payload": payload}))
    _wait_seq(page, 0)
    shown.wait_for(state="visible")
    assert shown.inner_text() == f"Not simulated: {reason}."
    head = page.locator("#cand-0 .sim-head").first
    assert re.fullmatch(r"Test 1; expected \S+", head.inner_text())  # not "simulated ...": nothing was

    page.reload()
    _wait_sockets(page, sockets, 2)
    assert shown.is_visible() and shown.inner_text() == f"Not simulated: {reason}."
    assert re.fullmatch(r"Test 1; expected \S+", head.inner_text())
    assert page.errors == []
