"""The run page's WebSocket: replay from last_seq out of the database, in order, then live events, one
event or several per message; access for owner, staff and share-token holders only. Channels'
WebsocketCommunicator over Redis."""

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


def _seqs(html: str) -> list[int]:
    """The events in one message, in its order (each event's fragments end with its marker)."""
    return [int(s) for s in re.findall(r'id="run-seq" hx-swap-oob="true" data-seq="(-?\d+)"', html)]


async def _receive_through(communicator, last: int) -> tuple[list[int], str]:
    """Messages until the one carrying event ``last``: the seqs they carried, in order, and their HTML."""
    seqs: list[int] = []
    html = ""
    while not seqs or seqs[-1] < last:
        message = await communicator.receive_from(timeout=5)
        assert _seqs(message), message
        seqs += _seqs(message)
        html += message
    return seqs, html


def _event(run, seq, type_, **payload):
    return {"run_id": str(run.id), "seq": seq, "type": type_, "payload": payload}


@database_sync_to_async
def _started_run(make_run, events):
    run = make_run(status="running", settings={"k": 1, "turns": 0})
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

    seqs, replayed = await _receive_through(communicator, 2)
    assert seqs == [1, 2]
    assert 'hx-swap-oob="beforeend:#cand-0-text"' in replayed
    assert "&lt;b&gt;bold&lt;/b&gt;" in replayed and "<b>" not in replayed  # model text is escaped

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
    assert _seqs(live) == [3]
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
    seqs, _ = await _receive_through(communicator, 5)
    assert seqs == [3, 4, 5]
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
    assert _seqs(first)[0] == 0
    assert 'data-testid="cancel-run"' not in first  # the status fragment has no buttons for readers
    await communicator.disconnect()


async def test_it_refuses_a_wrong_token(make_run):
    run = await _started_run(make_run, SCRIPT)
    communicator, connected, code = await _connect(run, AnonymousUser(), "last_seq=-1&token=nope")
    assert not connected and code == 4403


# -- the fan-out inside one process (webapp.runs.live) -----------------------------------------------


def _feeds():
    from webapp.runs import live

    return live._loop_feeds()


async def test_viewers_of_a_run_share_one_group_membership_and_see_their_own_buttons(make_run, alice):
    run = await _started_run(make_run, SCRIPT)
    owner, connected, _ = await _connect(run, alice, "last_seq=2")
    assert connected
    reader, connected, _ = await _connect(run, AnonymousUser(), f"last_seq=2&token={run.share_token}")
    assert connected
    assert len(_feeds()) == 1 and len(_feeds()[run.id].viewers) == 2

    await database_sync_to_async(record_and_publish)(
        run.id, _event(run, 3, "stage", stage="solve", state="started")
    )
    for_owner, for_reader = await owner.receive_from(timeout=5), await reader.receive_from(timeout=5)
    assert _seqs(for_owner) == _seqs(for_reader) == [3]
    assert 'data-testid="cancel-run"' in for_owner and 'data-testid="cancel-run"' not in for_reader

    await owner.disconnect()
    assert len(_feeds()[run.id].viewers) == 1
    await reader.disconnect()
    assert run.id not in _feeds()  # the last viewer gone, the feed left the group


async def test_live_events_are_forwarded_as_rendered_by_the_recorder(make_run, alice, monkeypatch):
    run = await _started_run(make_run, SCRIPT)
    communicator, connected, _ = await _connect(run, alice, "last_seq=2")
    assert connected

    def no_rendering_here(*args, **kwargs):
        raise AssertionError("the consumer's process rendered a live event")

    monkeypatch.setattr("webapp.runs.live.render_messages", no_rendering_here)
    await database_sync_to_async(record_and_publish)(
        run.id, _event(run, 3, "candidate_delta", candidate=0, text="more")
    )
    live_message = await communicator.receive_from(timeout=5)
    assert _seqs(live_message) == [3] and ">more</div>" in live_message
    await communicator.disconnect()


async def test_a_viewer_behind_sends_what_it_missed_as_one_message_in_order(make_run, alice):
    from webapp.runs.render import seq_marker

    run = await _started_run(make_run, SCRIPT)
    communicator, connected, _ = await _connect(run, alice, "last_seq=2")
    assert connected
    feed = _feeds()[run.id]
    for seq in (3, 4, 5):  # three events reach the feed before the viewer's task runs again
        html = f'<div hx-swap-oob="beforeend:#cand-0-text">{seq}</div>\n{seq_marker(seq)}'
        await feed.add({"type": "run.event", "event": _event(run, seq, "candidate_delta"), "html": html})
    message = await communicator.receive_from(timeout=5)
    assert _seqs(message) == [3, 4, 5]
    assert message.index(">3<") < message.index(">4<") < message.index(">5<")
    assert await communicator.receive_nothing(timeout=0.2)
    await communicator.disconnect()


async def test_a_page_behind_the_feed_replays_from_the_database_then_follows_live(make_run, alice):
    run = await _started_run(make_run, SCRIPT)
    first, connected, _ = await _connect(run, alice, "last_seq=2")  # the feed starts at seq 2
    assert connected
    late, connected, _ = await _connect(run, alice, "last_seq=0")  # a page rendered earlier
    assert connected
    seqs, replayed = await _receive_through(late, 2)
    assert seqs == [1, 2] and "&lt;b&gt;bold&lt;/b&gt;" in replayed

    await database_sync_to_async(record_and_publish)(
        run.id, _event(run, 3, "candidate_delta", candidate=0, text="z")
    )
    assert _seqs(await late.receive_from(timeout=5)) == [3]
    assert _seqs(await first.receive_from(timeout=5)) == [3]
    assert await late.receive_nothing(timeout=0.2) and await first.receive_nothing(timeout=0.1)
    await first.disconnect()
    await late.disconnect()


async def test_an_event_broadcast_without_html_is_rendered_from_the_database(make_run, alice):
    from channels.layers import get_channel_layer

    run = await _started_run(make_run, SCRIPT)
    communicator, connected, _ = await _connect(run, alice, "last_seq=2")
    assert connected

    @database_sync_to_async
    def persist(seq):
        from webapp.runs.models import RunEvent

        RunEvent.objects.create(
            run_id=run.id, seq=seq, type="candidate_delta", payload={"candidate": 0, "text": "late"}
        )

    await persist(3)
    event = _event(run, 3, "candidate_delta", candidate=0, text="late")
    await get_channel_layer().group_send(run.group_name, {"type": "run.event", "event": event})
    message = await communicator.receive_from(timeout=5)
    assert _seqs(message) == [3] and ">late</div>" in message
    await communicator.disconnect()


async def test_a_feed_lets_old_events_go_and_a_page_behind_them_replays_from_the_database(
    make_run, alice, monkeypatch
):
    monkeypatch.setattr("webapp.runs.live.KEEP", 1)
    run = await _started_run(make_run, SCRIPT)
    first, connected, _ = await _connect(run, alice, "last_seq=2")
    assert connected
    for seq in range(3, 9):
        await database_sync_to_async(record_and_publish)(
            run.id, _event(run, seq, "candidate_delta", candidate=0, text=f"<{seq}>")
        )
        seqs, _ = await _receive_through(first, seq)
        assert seqs == [seq]
    assert _feeds()[run.id].floor > 2 and min(_feeds()[run.id].events) > 3

    late, connected, _ = await _connect(run, alice, "last_seq=2")
    seqs, html = await _receive_through(late, 8)
    assert seqs == list(range(3, 9))
    assert all(html.index(f"&lt;{s}&gt;") < html.index(f"&lt;{s + 1}&gt;") for s in range(3, 8))
    assert await late.receive_nothing(timeout=0.2)
    await first.disconnect()
    await late.disconnect()
