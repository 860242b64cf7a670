"""A run and its page through an outage of Redis or PostgreSQL (issue 51, item 16).

- Redis down while a run records its events: the events are stored, their live broadcast fails (logged),
  and the run goes on to its end; a page that (re)connects afterwards replays the stored events. Before,
  the run failed with "ConnectionError: Error 111 connecting to 127.0.0.1:…", a message that named no
  service and showed on share links.
- PostgreSQL down while a run records its events: the run is failed with a message that says so, once
  the database answers again, instead of being left "running" for the reaper to call the worker dead.
- A run page's WebSocket handshake during an outage is accepted and closed at once with 1013 ("try
  again later"; the page's ws extension reconnects), not an HTTP 500.

"Down" is a real client pointed at a closed port (Redis), or a double that raises what the driver
raises (PostgreSQL), as in tests/webapp/test_service_errors.py.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
import redis
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.db import OperationalError
from django.test import override_settings

from webapp.runs import cancel
from webapp.runs.models import Run
from webapp.runs.privacy import message_for
from webapp.runs.record import record_and_publish
from webapp.runs.tasks import execute_run

pytestmark = pytest.mark.django_db(transaction=True)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


@pytest.fixture
def redis_down(monkeypatch) -> Any:
    """Every Redis client of the web app (channel layer, cache, cancel signals) at a closed port."""
    url = f"redis://127.0.0.1:{_closed_port()}/0"
    layers = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": url, "socket_connect_timeout": 1}]},
        }
    }
    caches = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
    monkeypatch.setattr(cancel, "_redis", lambda: redis.Redis.from_url(url))
    with override_settings(CHANNEL_LAYERS=layers, CACHES=caches):
        channel_layers.backends.clear()
        yield url
    channel_layers.backends.clear()


def test_a_run_goes_on_to_its_end_while_redis_is_down_and_its_events_are_stored(make_run, redis_down, caplog):
    run = make_run(settings={"k": 1, "turns": 0, "seed": 7})

    status = execute_run(str(run.id))

    run.refresh_from_db()
    assert (status, run.error) == (Run.FINISHED, "")
    seqs = list(run.events.values_list("seq", flat=True))
    assert seqs == list(range(len(seqs))) and run.events.last().type == "run_finished"
    assert "live broadcast" in caplog.text and "Redis" in caplog.text  # logged, naming the service


def test_a_broadcast_that_fails_is_logged_and_the_event_stays_recorded(make_run, monkeypatch, caplog):
    def down(group: str, message: dict) -> None:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr("webapp.broadcast.group_send", down)
    run = make_run(status="running", settings={"k": 1, "turns": 0})
    delta = {"candidate": 0, "text": "x"}
    event = {"run_id": str(run.id), "seq": 0, "type": "candidate_delta", "payload": delta}

    assert record_and_publish(run.id, event)

    assert run.events.filter(seq=0).exists()
    assert "Redis is not reachable" in caplog.text


def _database_down(monkeypatch, *, calls: int = 0, seconds: float = 0.0) -> None:
    """Recording an event from seq 2 on fails as a database that went away fails, for ``calls``
    attempts or for ``seconds`` from the first failure; the retries are quick."""
    import time

    import webapp.runs.record as record
    import webapp.runs.tasks as tasks

    real_record = record.record_and_publish
    outage: dict[str, Any] = {"calls": calls, "until": None}

    def recording(run_id: Any, event: Any, **kwargs: Any) -> bool:
        if record.event_dict(event)["seq"] >= 2:
            if outage["until"] is None and seconds:
                outage["until"] = time.monotonic() + seconds
            if outage["calls"] > 0 or (outage["until"] is not None and time.monotonic() < outage["until"]):
                outage["calls"] -= 1
                raise OperationalError('connection to server at "127.0.0.1", port 5432 failed: refused')
        return real_record(run_id, event, **kwargs)

    monkeypatch.setattr(tasks, "record_and_publish", recording)
    monkeypatch.setattr(record, "record_and_publish", recording)
    monkeypatch.setattr(tasks, "OUTAGE_RETRY_SECONDS", 0.05, raising=False)


def test_a_run_waits_through_a_short_database_outage_and_goes_on(make_run, monkeypatch):
    """A restart of PostgreSQL (or a dropped connection) while the run records an event: the event
    is recorded once the database answers again, and the run goes on to its end."""
    _database_down(monkeypatch, calls=3)
    run = make_run(settings={"k": 1, "turns": 0, "seed": 7})

    assert execute_run(str(run.id)) == Run.FINISHED

    seqs = list(run.events.values_list("seq", flat=True))
    assert seqs == list(range(len(seqs)))


def test_a_run_stopped_by_a_database_outage_says_so_once_the_database_is_back(make_run, monkeypatch):
    """The outage outlasts what an event waits for: the run stops, and once the database answers
    again it is failed with a message naming the database, no address in it (not "the worker stopped
    responding", the reaper's words for a run its worker left running)."""
    import webapp.runs.tasks as tasks

    _database_down(monkeypatch, seconds=0.6)
    monkeypatch.setattr(tasks, "OUTAGE_EVENT_SECONDS", 0.3, raising=False)
    monkeypatch.setattr(tasks, "OUTAGE_GIVE_UP_SECONDS", 1.5, raising=False)
    run = make_run(settings={"k": 1, "turns": 0, "seed": 7})

    execute_run(str(run.id))

    run.refresh_from_db()
    assert run.status == Run.FAILED
    assert run.error.startswith("The database was not reachable"), run.error
    assert "127.0.0.1" not in run.error and "worker" not in run.error
    assert message_for(run.error, shared=True) == run.error
    assert run.events.last().payload["error"] == "database_unreachable"


# -- the run page's WebSocket during an outage -------------------------------------------------------


async def _handshake(run: Run, query: str) -> tuple[bool, dict]:
    """The page's handshake through the whole ASGI application (origin check, sessions, routing)."""
    from webapp.asgi import application

    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.id}/?{query}", headers=headers)
    connected, _ = await communicator.connect(timeout=10)
    closed = await communicator.receive_output(timeout=10) if connected else {}
    await communicator.wait(timeout=5)
    return connected, closed


@pytest.mark.asyncio
async def test_a_socket_handshake_while_redis_is_down_is_closed_with_try_again_later(make_run, redis_down):
    run = await database_sync_to_async(make_run)(status="running", settings={"k": 1, "turns": 0})

    connected, closed = await _handshake(run, f"last_seq=-1&token={run.share_token}")

    assert connected and closed == {"type": "websocket.close", "code": 1013}


@pytest.mark.asyncio
async def test_a_socket_handshake_while_the_database_is_down_is_closed_with_try_again_later(
    make_run, monkeypatch
):
    run = await database_sync_to_async(make_run)(status="running", settings={"k": 1, "turns": 0})

    def down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("the connection is closed")

    monkeypatch.setattr("webapp.runs.consumers.Run.objects.filter", down)

    connected, closed = await _handshake(run, f"last_seq=-1&token={run.share_token}")

    assert connected and closed == {"type": "websocket.close", "code": 1013}


def test_the_watcher_keeps_beating_while_the_cancel_signal_cannot_be_read(make_run, monkeypatch, settings):
    """Redis down for the cancel signal must not stop the heartbeat: a watcher that died at the first
    failure left a healthy run to be reaped as dead a minute later."""
    import asyncio
    import threading
    import time

    from django.utils import timezone

    from webapp.runs.tasks import _watch

    def down(run_id: Any) -> bool:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(cancel, "signalled", down)
    settings.EXECSIM_HEARTBEAT_SECONDS = 0.05
    long_ago = timezone.now() - timezone.timedelta(hours=1)
    run = make_run(status=Run.RUNNING, heartbeat_at=long_ago)
    loop, stop = asyncio.new_event_loop(), threading.Event()
    watcher = threading.Thread(target=_watch, args=(str(run.id), loop, asyncio.Event(), stop))
    watcher.start()
    try:
        beats = set()
        deadline = time.monotonic() + 5
        while len(beats) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
            beats.add(Run.objects.values_list("heartbeat_at", flat=True).get(id=run.id))
        assert len(beats - {long_ago}) >= 2  # it beat, and went on beating
    finally:
        stop.set()
        watcher.join(timeout=5)
        loop.close()


def test_the_reaper_says_what_stopped_a_run_whose_worker_gave_up_waiting_for_the_database(make_run):
    from django.utils import timezone

    from webapp.runs.record import note_stop_reason, reap_stale_runs
    from webapp.runs.tasks import failure

    stale = timezone.now() - timezone.timedelta(hours=1)
    noted = make_run(status=Run.RUNNING, heartbeat_at=stale)
    silent = make_run(status=Run.RUNNING, heartbeat_at=stale)
    note_stop_reason(noted.id, *failure(OperationalError("connection refused")))

    assert sorted(reap_stale_runs()) == sorted([str(noted.id), str(silent.id)])

    noted.refresh_from_db(), silent.refresh_from_db()
    assert noted.error == "The database was not reachable, so the run stopped. Retry it."
    assert "stopped responding" in silent.error
