"""A share link shows what was run, not where: a failed run's message neither (issue 51, item 3).

A run that failed because the model server did not serve its model said so with the server's address
("…is not served by http://127.0.0.1:8813/v1"), on its share page and in ``export.json?token=``,
though the provenance there already left the address out. alice owns the run; carol is staff; bob is
another user; a visitor holds the share link. alice and carol read the message as recorded; whoever
opens the share link (alice included) and its export read "the model server" instead of the address,
and no other address or server folder either.
"""

from __future__ import annotations

from typing import Any

import pytest

from simulator.pipeline.events import Sequencer
from webapp.runs.models import Run
from webapp.runs.render import render_message
from webapp.runs.tasks import execute_run

pytestmark = pytest.mark.django_db(transaction=True)

SERVER = "http://127.0.0.1:8813/v1"
MESSAGE = f"model 'nlex-7b' is not served by {SERVER} (it serves: other)"
WHERE = ("127.0.0.1", "8813", SERVER)


async def unserved_pipeline(problem: Any, settings: Any, client: Any, *, run_id: str, **extra: Any):
    """The model server answers, but not with the run's model: the run fails at once."""
    emit = Sequencer(run_id)
    provenance = {"model": "nlex-7b", "server": SERVER, "model_root": "/srv/execsim/data/models/nlex-7b"}
    yield emit("run_started", problem=problem.to_dict(), settings={}, provenance=provenance)
    yield emit("run_failed", error="model_not_found", message=MESSAGE)


@pytest.fixture(autouse=True)
def _unserved(settings: Any) -> None:
    settings.EXECSIM_PIPELINE = f"{__name__}.unserved_pipeline"


@pytest.fixture
def failed(make_run: Any) -> Run:
    run = make_run(settings={"k": 1, "turns": 0, "seed": 7})
    assert execute_run(str(run.id)) == Run.FAILED
    run.refresh_from_db()
    assert run.error == MESSAGE  # there to leak
    return run


def _hides_where(text: str) -> None:
    for where in WHERE:
        assert where not in text, where


def test_a_share_link_says_the_model_server_not_its_address(client, alice, failed):
    for viewer in (None, alice):  # a visitor; the owner opening her own link
        client.logout()
        if viewer is not None:
            client.force_login(viewer)
        page = client.get(f"/share/{failed.share_token}/").content.decode()
        assert "model &#x27;nlex-7b&#x27; is not served by the model server (it serves: other)" in page
        _hides_where(page)
        export = client.get(f"/runs/{failed.id}/export.json?token={failed.share_token}")
        assert export.status_code == 200
        _hides_where(export.content.decode())
        data = export.json()
        assert data["error"] == "model 'nlex-7b' is not served by the model server (it serves: other)"
        failure = next(e for e in data["events"] if e["type"] == "run_failed")
        assert failure["payload"]["message"] == data["error"]


def test_the_owner_and_staff_read_the_message_as_recorded_and_others_not_at_all(
    client, alice, bob, carol, failed
):
    for viewer in (alice, carol):
        client.force_login(viewer)
        assert SERVER in client.get(f"/runs/{failed.id}/").content.decode()
        assert client.get(f"/runs/{failed.id}/export.json").json()["error"] == MESSAGE
    client.force_login(bob)
    assert client.get(f"/runs/{failed.id}/").status_code == 404
    assert client.get(f"/runs/{failed.id}/export.json").status_code == 404


def test_live_fragments_for_share_link_readers_hide_the_address(failed):
    event = failed.events.get(type="run_failed").as_event_dict()
    owner, reader = render_message(failed, event)
    assert SERVER in owner
    _hides_where(reader)
    assert "not served by the model server" in reader


@pytest.mark.parametrize(
    ("recorded", "shown"),
    [
        (f"the model server at {SERVER} failed mid-reply: boom", "the model server failed mid-reply: boom"),
        (f"model server at {SERVER} is not reachable: refused", "model server is not reachable: refused"),
        (f"connection to the model server at {SERVER}/ failed", "connection to the model server failed"),
        (
            "Error 111 connecting to 127.0.0.1:6379. Connection refused.",
            "Error 111 connecting to (address hidden). Connection refused.",
        ),
        ("redis://10.0.0.5:6379/0 is down", "(address hidden) is down"),
        ("No such file: '/srv/execsim/data/models/x/config.json'", "No such file: '(path hidden)'"),
        ("Wrong answer 1/2 on test 3, x / y", "Wrong answer 1/2 on test 3, x / y"),
    ],
)
def test_where_is_left_out_of_any_message(recorded: str, shown: str) -> None:
    from webapp.runs.privacy import message_for

    assert message_for(recorded, shared=True, server=SERVER) == shown
    assert message_for(recorded, shared=False, server=SERVER) == recorded
