"""Issue 11 item 11: a Content-Security-Policy on every page, a WebSocket origin check that compares
the port too, 404 (not 500) for odd paths, a body over the upload limit named, and ``execsim up`` on a
busy port failing before it says it is up. Production settings (PostgreSQL, Redis)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.testing import ApplicationCommunicator
from channels.testing import WebsocketCommunicator
from django.test import override_settings

REPO = Path(__file__).resolve().parents[2]
EXECSIM = Path(sys.executable).with_name("execsim")


@pytest.mark.django_db
def test_every_page_carries_a_content_security_policy(client, alice):
    client.force_login(alice)
    for path in ("/problems/", "/simulate/", "/explorer/", "/accounts/login/"):
        policy = client.get(path).headers.get("Content-Security-Policy", "")
        assert "script-src 'self'" in policy and "object-src 'none'" in policy, path
        assert "unsafe-inline" not in policy.split("style-src-attr")[0], path  # no inline scripts or styles
        assert "frame-ancestors 'none'" in policy, path


async def _http(app, path: str) -> int:
    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1")],
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
    }
    communicator = ApplicationCommunicator(app, scope)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(timeout=10)
    return int(start["status"])


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@override_settings(SERVE_STATIC=True)
async def test_odd_paths_answer_404_not_500():
    from webapp.asgi import application

    assert await _http(application, "/static/%2e%2e/manage.py") == 404
    assert await _http(application, "/static/../manage.py") == 404
    assert await _http(application, "/ws/runs/not-a-uuid/") == 404


async def _ws_accepted(origin: str, host: str = "127.0.0.1:8000", path: str = "/ws/runs/x/") -> bool | None:
    from webapp.asgi import application

    communicator = WebsocketCommunicator(
        application, path, headers=[(b"origin", origin.encode()), (b"host", host.encode())]
    )
    try:
        connected, _ = await communicator.connect(timeout=5)
    except Exception:  # the application crashed on the handshake
        return None
    await communicator.disconnect()
    return connected


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_the_websocket_origin_check_compares_the_port(make_run, alice):
    from channels.db import database_sync_to_async

    run = await database_sync_to_async(make_run)(status="running")
    path = f"/ws/runs/{run.id}/?last_seq=-1"
    # anonymous: the origin check passes, then the consumer refuses (4403) - a close, not a crash
    assert await _ws_accepted("http://127.0.0.1:8000", path=path) is False
    assert await _ws_accepted("http://127.0.0.1:9999", path=path) is False
    assert await _ws_accepted("http://127.0.0.1:8000", path="/ws/runs/not-a-uuid/") is False  # no 500

    from webapp.security import same_origin

    assert same_origin("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert not same_origin("http://127.0.0.1:9999", "127.0.0.1:8000")  # another site on this machine
    assert not same_origin("http://evil.example:8000", "127.0.0.1:8000")
    assert not same_origin(None, "127.0.0.1:8000")


@pytest.mark.django_db
def test_a_paste_over_the_upload_limit_says_what_the_limit_is(client, alice, settings):
    client.force_login(alice)
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    response = client.post("/explorer/", {"code": "x" * (limit + 10), "mode": "stdin", "call_input": ""})
    assert response.status_code == 413
    page = response.content.decode()
    assert f"{limit:,} bytes" in page and "DATA_UPLOAD_MAX_MEMORY_SIZE" in page


def test_execsim_up_asks_a_model_server_already_on_its_port_instead_of_starting_one(monkeypatch, capsys):
    """`execsim model serve` first, then `execsim up`: the model's port is taken, so no second vLLM
    is started (it would fail after loading, and the first server's answers looked like its own)."""
    from simulator import config
    from webapp.cli import _start_model_in_background

    monkeypatch.setenv("EXECSIM_MODEL_URL", "unset by the test")
    monkeypatch.setattr("simulator.llm.server.vllm_installed", lambda: True)
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        monkeypatch.setattr(config, "DEFAULT_MODEL_PORT", other.getsockname()[1])
        holder = _start_model_in_background()
    assert holder == {"server": None}
    out = capsys.readouterr().out
    assert f"127.0.0.1:{config.DEFAULT_MODEL_PORT} is taken" in out and "asks the server listening" in out


def test_execsim_up_on_a_busy_port_fails_before_it_says_it_is_up(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")
        }
        done = subprocess.run(
            [str(EXECSIM), "up", "--no-model", "--port", str(port)],
            cwd=REPO,
            env={**env, "EXECSIM_DATA_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
        )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "ExecSim is up" not in output and f"127.0.0.1:{port}" in output


@pytest.mark.django_db
def test_a_private_problem_is_not_found_alike_for_a_visitor_and_another_user(client, alice, bob, problem):
    """The 404 page does not tell a private problem from a missing one; it keeps the site's navigation,
    and a visitor is offered to log in, since the page may be theirs."""
    problem.is_public = False
    problem.save()
    visitor = client.get(f"/problems/{problem.pk}/")
    missing = client.get("/problems/999999/")
    for response in (visitor, missing):
        page = response.content.decode()
        assert response.status_code == 404 and 'data-testid="not-found"' in page
        assert 'data-testid="nav-problems"' in page and "not shared with you" in page
    assert f"/accounts/login/?next=/problems/{problem.pk}/" in visitor.content.decode()
    client.force_login(bob)
    other = client.get(f"/problems/{problem.pk}/").content.decode()
    assert 'data-testid="not-found"' in other and "log in" not in other and "run history" in other
    assert "Add one" not in other
    client.force_login(alice)
    assert client.get(f"/problems/{problem.pk}/").status_code == 200
