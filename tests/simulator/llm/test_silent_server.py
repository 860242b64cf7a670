"""A model server that accepts connections but never answers (issue 11, item 11): the client gives up
within its overall wait (EXECSIM_MODEL_WAIT_S) with a clear message, and ``execsim solve`` shows that
it is waiting, then says so and exits 1. The server is a real TCP listener on the loopback that accepts
and reads but never writes; every test is bounded."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from simulator.cli import main
from simulator.llm.client import ChatClient
from simulator.llm.errors import LLMTimeout

REPO = Path(__file__).resolve().parents[3]
SQUARE = REPO / "examples" / "square.json"


@pytest.fixture
def silent_url() -> Iterator[str]:
    """``http://127.0.0.1:<port>/v1`` of a server that accepts every connection and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)  # read nothing, answer nothing, keep it open

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        listener.close()


@pytest.mark.parametrize("call", ["chat", "models"])
def test_the_client_gives_up_within_its_overall_wait(silent_url: str, call: str) -> None:
    async def ask() -> None:
        async with ChatClient(silent_url, model="m", wait_s=1.0, retries=3, backoff_s=0.01) as client:
            if call == "chat":
                await client.chat([{"role": "user", "content": "hi"}])
            else:
                await client.models()

    started = time.monotonic()
    with pytest.raises(LLMTimeout, match=r"sent nothing within 1 s.*EXECSIM_MODEL_WAIT_S"):
        asyncio.run(asyncio.wait_for(ask(), timeout=15))
    assert time.monotonic() - started < 5


def test_the_wait_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXECSIM_MODEL_WAIT_S", "7.5")
    assert ChatClient("http://127.0.0.1:9/v1", model="m").wait_s == 7.5


def test_solve_shows_it_is_waiting_then_fails_with_a_clear_line(
    silent_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from simulator.cli.solve import _Waiting

    monkeypatch.setenv("EXECSIM_MODEL_URL", silent_url)
    monkeypatch.setenv("EXECSIM_MODEL_WAIT_S", "1")
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path / "data"))
    started = time.monotonic()
    code = main(["solve", str(SQUARE), "--k", "1", "--turns", "0"])
    assert code == 1 and time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert "run failed" in err and "sent nothing within 1 s" in err

    line = _Waiting("solve ...")  # the status line's text, rendered at each refresh
    line.since -= 12
    assert str(line.__rich__()) == "solve ... · waiting for the model (12 s)"
    line.heard()
    assert str(line.__rich__()) == "solve ..."
