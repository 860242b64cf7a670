"""Production mode (Redis channel layer): an idle run page's socket stays open. redis-py's default 5 s
socket timeout equals channels_redis's 5 s blocking pop, so without a longer socket timeout in the
layer's host config every idle feed failed with ``TimeoutError`` and closed its sockets (1011)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from webapp.runs.record import record_and_publish
from webapp.runs.routing import websocket_urlpatterns

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.slow]


@database_sync_to_async
def _running_run(make_run):
    run = make_run(status="running", settings={"k": 1, "turns": 0})
    started = {"problem": {}, "settings": {}, "provenance": {"model": "m"}}
    event = {"run_id": str(run.id), "seq": 0, "type": "run_started", "payload": started}
    assert record_and_publish(run.id, event)
    return run


async def test_an_idle_run_page_socket_stays_open_for_30_s_over_redis(make_run, alice):
    assert type(get_channel_layer()).__name__ == "RedisChannelLayer"  # the production mode's layer
    run = await _running_run(make_run)
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/runs/{run.id}/?last_seq=0")
    communicator.scope["user"] = alice
    connected, _ = await communicator.connect()
    assert connected
    try:
        assert await communicator.receive_nothing(timeout=30, interval=0.5)  # no close 1011, nothing at all
        delta = {"candidate": 0, "text": "still here"}
        event = {"run_id": str(run.id), "seq": 1, "type": "candidate_delta", "payload": delta}
        await database_sync_to_async(record_and_publish)(run.id, event)
        assert "still here" in await communicator.receive_from(timeout=5)  # the live feed still forwards
    finally:
        await communicator.disconnect()
