"""Open run-page sockets per account and per client address (issue 51, item 10): one account opening
100 sockets at 20 a second made other users' handshakes fail. Beyond EXECSIM_MAX_SOCKETS_PER_USER (an
account's) or EXECSIM_MAX_SOCKETS_PER_ADDRESS (an address's, share-link readers included) a handshake
is refused (close 4429 before the accept: daphne answers 403) and other accounts and addresses still
connect; a closed socket gives its place back; a place held by a server process that died expires.
Through the whole ASGI application (origin check, sessions, routing) and Channels' communicator."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import override_settings

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def _session_cookie(user) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


async def _open(run, *, cookie: str = "", address: str = "10.0.0.1", query: str = "last_seq=-1"):
    from webapp.asgi import application

    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.id}/?{query}", headers=headers)
    communicator.scope["client"] = (address, 40000)
    connected, code = await communicator.connect(timeout=10)
    return communicator, connected, code


@override_settings(EXECSIM_MAX_SOCKETS_PER_USER=2, EXECSIM_MAX_SOCKETS_PER_ADDRESS=100)
async def test_an_account_opens_at_most_its_limit_of_sockets_and_others_still_connect(make_run, alice, carol):
    run = await database_sync_to_async(make_run)(status="running", settings={"k": 1, "turns": 0})
    alices = await database_sync_to_async(_session_cookie)(alice)
    carols = await database_sync_to_async(_session_cookie)(carol)  # staff: sees alice's run

    first, ok1, _ = await _open(run, cookie=alices)
    second, ok2, _ = await _open(run, cookie=alices, address="10.0.0.2")
    _, ok3, code = await _open(run, cookie=alices, address="10.0.0.3")  # another address: same account
    other, ok_other, _ = await _open(run, cookie=carols)

    assert (ok1, ok2, ok3, code, ok_other) == (True, True, False, 4429, True)
    await first.disconnect()  # gives its place back
    again, ok_again, _ = await _open(run, cookie=alices)
    assert ok_again
    for communicator in (second, other, again):
        await communicator.disconnect()


@override_settings(EXECSIM_MAX_SOCKETS_PER_USER=100, EXECSIM_MAX_SOCKETS_PER_ADDRESS=2)
async def test_an_address_opens_at_most_its_limit_of_sockets_share_link_readers_included(make_run):
    run = await database_sync_to_async(make_run)(status="running", settings={"k": 1, "turns": 0})
    query = f"last_seq=-1&token={run.share_token}"

    opened = [await _open(run, query=query) for _ in range(3)]
    elsewhere, ok_elsewhere, _ = await _open(run, query=query, address="10.0.0.9")

    assert [(ok, code) for _, ok, code in opened] == [(True, None), (True, None), (False, 4429)]
    assert ok_elsewhere
    for communicator, ok, _ in [*opened, (elsewhere, True, None)]:
        if ok:
            await communicator.disconnect()


@pytest.mark.parametrize("last_seq", ["-99999999999", "1_0", "²", "9" * 5000])
async def test_a_last_seq_that_is_not_a_bounded_number_is_refused(make_run, last_seq):
    run = await database_sync_to_async(make_run)(status="running", settings={"k": 1, "turns": 0})

    communicator, connected, code = await _open(run, query=f"last_seq={last_seq}&token={run.share_token}")

    assert (connected, code) == (False, 4400)


async def test_a_place_held_by_a_process_that_died_expires(monkeypatch):
    """A server process that dies holding sockets stops renewing their places: they lapse after
    SOCKET_LEASE_SECONDS, and the account and the address may connect again."""
    from types import SimpleNamespace

    from webapp import limits

    now = [1000.0]
    monkeypatch.setattr(limits, "time", SimpleNamespace(time=lambda: now[0]))  # this module's clock only
    with override_settings(EXECSIM_MAX_SOCKETS_PER_USER=1, EXECSIM_MAX_SOCKETS_PER_ADDRESS=1):
        limits.open_socket("dead-process-socket", 7, "10.0.0.5")
        with pytest.raises(limits.LimitExceeded, match="limit 1"):
            limits.open_socket("refused", 7, "10.0.0.6")
        with pytest.raises(limits.LimitExceeded, match="limit 1"):
            limits.open_socket("refused", 8, "10.0.0.5")
        now[0] += limits.SOCKET_LEASE_SECONDS / 2
        limits.renew_socket("dead-process-socket", 7, "10.0.0.5")  # still alive: renewed
        now[0] += limits.SOCKET_LEASE_SECONDS - 1
        with pytest.raises(limits.LimitExceeded):
            limits.open_socket("refused", 7, "10.0.0.6")
        now[0] += 2  # no renewal since: lapsed
        limits.open_socket("fresh", 7, "10.0.0.5")
        limits.close_socket("fresh", 7, "10.0.0.5")
