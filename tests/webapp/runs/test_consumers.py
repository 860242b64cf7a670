"""The run page's WebSocket: replay from last_seq out of the database, in order, then live events;
access for owner, staff and share-token holders only. Channels' WebsocketCommunicator over Redis."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from webapp.runs.record import record_and_publish
from webapp.runs.routing import websocket_urlpatterns

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def _seq(html: str) -> int:
    return int(re.search(r'id="run-seq" hx-swap-oob="true" data-seq="(-?\d+)"', html).group(1))


def _event(run, seq, type_, **payload):
    return {"run_id": str(run.id), "seq": seq, "type": type_, "payload": payload}


@database_sync_to_async
def _started_run(make_run, events):
    run = make_run(status="running", settings={"k": 1, "turns": 0, "sims": 1})
    for seq, (type_, payload) in enumerate(events):
        assert record_and_publish(run.id, _event(run, seq, type_, **payload))
    return run


SCRIPT = [
    ("run_started", {"problem": {}, "settings": {}, "provenance": {"model": "m"}}),
    ("candidate_delta", {"candidate": 0, "text": "def add_one(x):"}),
    ("candidate_delta", {"candidate": 0, "text": " <b>bold</b>"}),
]


async def _connect(run, user, query):
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/runs/{run.id}/?{query}")
    communicator.scope["user"] = user
    connected, code = await communicator.connect()
    return communicator, connected, code


async def test_it_replays_missed_events_in_order_then_forwards_live_ones(make_run, alice):
    run = await _started_run(make_run, SCRIPT)
    communicator, connected, _ = await _connect(run, alice, "last_seq=0")
    assert connected

    replayed = [await communicator.receive_from(timeout=5) for _ in range(2)]
    assert [_seq(m) for m in replayed] == [1, 2]
    assert 'hx-swap-oob="beforeend:#cand-0-text"' in replayed[1]
    assert "&lt;b&gt;bold&lt;/b&gt;" in replayed[1] and "<b>" not in replayed[1]  # model text is escaped

    await database_sync_to_async(record_and_publish)(
        run.id,
        _event(
            run,
            3,
            "candidate_done",
            candidate=0,
            text="t",
            code="def add_one(x):\n    return x + 1\n",
            parse_error=None,
            tokens=3,
        ),
    )
    live = await communicator.receive_from(timeout=5)
    assert _seq(live) == 3
    assert 'id="cand-0-code"' in live and 'hx-swap-oob="true"' in live
    assert await communicator.receive_nothing(timeout=0.2)
    await communicator.disconnect()


async def test_a_live_event_past_a_gap_brings_the_dropped_ones_from_the_database(make_run, alice):
    run = await _started_run(make_run, SCRIPT)
    communicator, connected, _ = await _connect(run, alice, "last_seq=2")
    assert connected

    @database_sync_to_async
    def persist_without_broadcast(seq):  # what a channel layer that dropped the message leaves behind
        from webapp.runs.models import RunEvent

        RunEvent.objects.create(
            run_id=run.id, seq=seq, type="candidate_delta", payload={"candidate": 0, "text": "x"}
        )

    await persist_without_broadcast(3)
    await persist_without_broadcast(4)
    await database_sync_to_async(record_and_publish)(
        run.id, _event(run, 5, "candidate_delta", candidate=0, text="y")
    )
    received = [await communicator.receive_from(timeout=5) for _ in range(3)]
    assert [_seq(m) for m in received] == [3, 4, 5]
    assert await communicator.receive_nothing(timeout=0.2)
    await communicator.disconnect()


async def test_it_sends_nothing_already_on_the_page(make_run, alice):
    run = await _started_run(make_run, SCRIPT)
    communicator, connected, _ = await _connect(run, alice, "last_seq=2")
    assert connected
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()


async def test_it_refuses_an_outsider(make_run, bob):
    run = await _started_run(make_run, SCRIPT)
    communicator, connected, code = await _connect(run, bob, "last_seq=-1")
    assert not connected and code == 4403


async def test_it_lets_a_share_token_holder_watch_read_only(make_run):
    run = await _started_run(make_run, SCRIPT)
    communicator, connected, _ = await _connect(run, AnonymousUser(), f"last_seq=-1&token={run.share_token}")
    assert connected
    first = await communicator.receive_from(timeout=5)
    assert _seq(first) == 0
    assert 'data-testid="cancel-run"' not in first  # the status fragment has no buttons for readers
    await communicator.disconnect()


async def test_it_refuses_a_wrong_token(make_run):
    run = await _started_run(make_run, SCRIPT)
    communicator, connected, code = await _connect(run, AnonymousUser(), "last_seq=-1&token=nope")
    assert not connected and code == 4403
