"""The model's state as the header, its page and the Solve button say it (webapp.model_state, issue 52):
"starting (about N min)" while embedded mode starts it, "not answering" where nothing more is known,
"could not start"; and run history naming a "Simulate my code" run as such."""

from __future__ import annotations

import time
from typing import Any

import pytest

from webapp import model_state

pytestmark = pytest.mark.django_db

FRAGMENT = {"headers": {"HX-Request": "true"}}


@pytest.fixture
def down(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    """A model server that does not answer; no start known; the data directory a temporary one."""
    monkeypatch.setattr(model_state, "answers", lambda url: False)
    monkeypatch.setenv("EXECSIM_DATA_DIR", str(tmp_path))
    model_state.forget()
    yield tmp_path
    model_state.forget()


def test_production_says_not_answering_not_down(client, down):
    fragment = client.get("/status/model/", **FRAGMENT).content.decode()
    assert 'data-state="down"' in fragment and 'data-up="false"' in fragment
    assert 'data-testid="model-words">not answering<' in fragment  # not a bare "down"
    assert 'data-sentence="The model is not answering, so a run would fail: Solve opens' in fragment


def test_embedded_mode_says_starting_with_the_minutes_left(client, down):
    model_state.starting()  # the first start here: a CPU's 3 minutes
    fragment = client.get("/status/model/", **FRAGMENT).content.decode()
    assert 'data-state="starting"' in fragment and "starting (about 3 min)" in fragment
    assert 'class="status-dot starting"' in fragment  # amber, not the red of "down"
    assert "starting (about 3 min): this server started it" in client.get("/status/model/").content.decode()


def test_a_start_taking_longer_than_expected_says_so(down, monkeypatch):
    model_state.starting(expected_s=60)
    later = time.monotonic() + 130
    monkeypatch.setattr(model_state.time, "monotonic", lambda: later)
    assert model_state.current("http://x").words == "still starting (3 min so far)"


def test_the_last_start_is_the_next_estimate(down):
    model_state.starting()
    model_state.ready()
    (down / "logs" / "model-warmup.json").write_text('{"seconds": 50}')  # as if it took 50 s
    model_state.starting()
    assert model_state.current("http://x").words == "starting (about 1 min)"
    (down / "logs" / "model-warmup.json").write_text("not json")
    model_state.starting()
    assert model_state.current("http://x").words == "starting (about 3 min)"


def test_an_answering_model_is_up_whatever_embedded_mode_thinks(monkeypatch):
    monkeypatch.setattr(model_state, "answers", lambda url: True)
    model_state.starting()
    try:
        state = model_state.current("http://x")
    finally:
        model_state.forget()
    assert state.up and state.words == "up" and state.sentence == ""


def test_a_failed_start_says_so_and_why_to_the_signed_in(client, alice, down):
    model_state.failed("the vLLM server exited with code 3 while starting\n--- server log ---\nsecret")
    assert "could not start" in client.get("/status/model/", **FRAGMENT).content.decode()
    assert "exited with code 3" not in client.get("/status/model/").content.decode()  # a visitor
    client.force_login(alice)
    page = client.get("/status/model/").content.decode()
    assert "could not start: the vLLM server exited with code 3 while starting" in page
    assert "secret" not in page  # the first line only


def test_embedded_mode_without_vllm_says_it_runs_no_model(client, down, monkeypatch):
    from webapp.cli import _start_model_in_background

    monkeypatch.setenv("EXECSIM_MODEL_URL", "http://127.0.0.1:9/v1")  # restored after the test
    monkeypatch.setattr("simulator.llm.server.vllm_installed", lambda: False)
    _start_model_in_background()
    state = model_state.current("http://x")
    assert state.words == "not running" and "vLLM is not installed" in state.sentence


def test_embedded_mode_is_starting_from_the_moment_it_begins_then_says_why_it_failed(down, monkeypatch):
    from webapp.cli import _start_model_in_background

    monkeypatch.setenv("EXECSIM_MODEL_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setattr("simulator.llm.server.vllm_installed", lambda: True)
    monkeypatch.setattr("simulator.llm.server.port_in_use", lambda host, port: None)
    begun = []

    def prepare(**_: Any) -> None:
        begun.append(model_state.current("http://x").name)
        raise RuntimeError("no weights here")

    monkeypatch.setattr("simulator.llm.default_model.prepare_default", prepare)
    _start_model_in_background()
    deadline = time.monotonic() + 10
    while model_state.current("http://x").name != "failed" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert begun == ["starting"]
    assert model_state.current("http://x").detail == "no weights here"


# -- run history -----------------------------------------------------------------------------------------


def test_run_history_names_simulate_my_code_runs_as_such(client, alice, make_run):
    import re

    make_run()
    make_run(code="def add_one(x):\n    return x + 1\n")  # Simulate my code against the problem
    make_run(kind="simulate", problem=None, code="print(1)\n")
    client.force_login(alice)
    page = client.get("/runs/").content.decode()
    kinds = [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r'data-testid="run-kind">(.*?)</td>', page)]
    assert sorted(kinds) == ["simulate my code", "simulate my code", "solve"]
