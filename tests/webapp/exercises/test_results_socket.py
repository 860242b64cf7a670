"""The results page's socket: its owner (and staff) get the class's results at once and again after a
student answers; another educator and a visitor are refused."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.test import Client

from tests.webapp.exercises.support import answer, exercise_of, join
from tests.webapp.explorer.support import _user
from webapp.exercises.routing import websocket_urlpatterns

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.asyncio,
    pytest.mark.usefixtures("sandbox"),
]


async def _connect(exercise, user):
    path = f"/ws/exercises/{exercise.slug}/results/"
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = user
    connected, code = await communicator.connect()
    return communicator, connected, code


@database_sync_to_async
def _answer(exercise, name: str, text: str) -> None:
    client = Client()
    answer(client, exercise, join(client, exercise, name), "result", text)


async def test_the_owner_gets_the_results_live_and_others_are_refused(educator, carol, django_user_model):
    exercise = await database_sync_to_async(exercise_of)(educator)
    edgar = await database_sync_to_async(_user)(django_user_model, "edgar", "educator")
    for outsider in (edgar, AnonymousUser()):
        communicator, connected, code = await _connect(exercise, outsider)
        assert not connected and code == 4403
    staff, connected, _ = await _connect(exercise, carol)
    assert connected
    await staff.receive_from(timeout=5)
    communicator, connected, _ = await _connect(exercise, educator)
    assert connected
    first = await communicator.receive_from(timeout=5)
    assert 'id="exercise-results"' in first and 'hx-swap-oob="true"' in first and "0 students" in first
    await _answer(exercise, "<i>Ada</i>", "13")
    html = ""
    while "13" not in html:  # a join, then an answer: sent once or coalesced into one
        html = await communicator.receive_from(timeout=5)
    assert "0 of 1" in html and "&lt;i&gt;Ada&lt;/i&gt;" in html and "<i>Ada" not in html
    await communicator.disconnect()
    await staff.disconnect()
