"""Explorer pages: paste code -> a saved, capped trace with a permalink; open a candidate of a run with
the model's simulation checked claim by claim; the embed view may be framed and is public."""

from __future__ import annotations

import json
import re

import pytest
from django.test import override_settings

from webapp.explorer.models import Trace

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sandbox")]

LOOP = "def count(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"


def _payload(page: str) -> dict:
    match = re.search(r'<script id="explorer-data" type="application/json">(.*?)</script>', page, re.S)
    assert match, "the trace JSON is embedded in the page"
    return json.loads(match.group(1))


def test_pasting_code_saves_a_trace_and_redirects_to_its_permalink(client, educator):
    client.force_login(educator)
    response = client.post("/explorer/", {"code": LOOP, "mode": "call", "call_input": "count(4)"})
    trace = Trace.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/explorer/t/{trace.slug}/"
    assert trace.owner == educator and trace.status == "ok" and trace.result["value"] == "6"
    assert len(trace.slug) >= 20  # unguessable
    page = client.get(response["Location"]).content.decode()
    data = _payload(page)
    assert data["trace"]["steps"][0]["changed"] == {"n": {"repr": "4", "type": "int"}}
    assert data["lines"][0] == "def count(n):"
    assert any("count is called with n = 4" in s["text"] for s in data["sentences"])
    assert 'data-testid="ex-cap"' not in page


def test_stdin_programs_are_traced_with_their_input(client, educator):
    client.force_login(educator)
    client.post(
        "/explorer/", {"code": "n = int(input())\nprint(n * 2)\n", "mode": "stdin", "call_input": "21\n"}
    )
    trace = Trace.objects.get()
    assert trace.mode == "stdin" and trace.result["stdout"] == "42\n"
    page = client.get(f"/explorer/t/{trace.slug}/").content.decode()  # the result says what it printed
    assert '<pre class="ex-printed" data-testid="ex-printed">42\n</pre>' in page


@override_settings(EXECSIM_EXPLORER_MAX_STEPS=25)
def test_a_long_program_shows_a_partial_trace_and_states_the_cap(client, educator):
    client.force_login(educator)
    response = client.post("/explorer/", {"code": LOOP, "mode": "call", "call_input": "count(1000)"})
    trace = Trace.objects.get()
    assert trace.status == "ok" and trace.truncated and trace.step_count == 25
    page = client.get(response["Location"]).content.decode()
    assert 'data-testid="ex-cap"' in page and "only the first 25 steps" in page
    assert len(_payload(page)["trace"]["steps"]) == 25


def test_a_bad_call_expression_is_a_form_error_and_nothing_is_saved(client, educator):
    client.force_login(educator)
    response = client.post("/explorer/", {"code": LOOP, "mode": "call", "call_input": "count(("})
    assert response.status_code == 200 and "not a Python expression" in response.content.decode()
    assert not Trace.objects.exists()


def test_a_script_pasted_with_no_call_is_traced_as_it_is(client, educator):
    """The form opens in call mode; a script with a blank call runs as a script (stdin mode, nothing on
    stdin), as Python Tutor runs what is pasted, instead of asking for a call."""
    client.force_login(educator)
    response = client.post(
        "/explorer/", {"code": "xs = [1, 2]\nprint(sum(xs))\n", "mode": "call", "call_input": " "}
    )
    assert response.status_code == 302
    trace = Trace.objects.get()
    assert (trace.mode, trace.call_input, trace.status) == ("stdin", "", "ok")
    assert trace.result["stdout"] == "3\n"
    assert "script &middot;" in client.get(response["Location"]).content.decode()


def test_user_code_errors_are_saved_as_data(client, educator):
    client.force_login(educator)
    client.post("/explorer/", {"code": "def f():\n    return 1 / 0\n", "mode": "call", "call_input": "f()"})
    trace = Trace.objects.get()
    assert trace.status == "runtime_error" and trace.result["exception"]["type"] == "ZeroDivisionError"


def test_the_paste_page_needs_a_login(client):
    assert client.get("/explorer/").status_code == 302


def test_permalink_and_embed_are_viewable_logged_out_and_only_embed_may_be_framed(client, educator):
    client.force_login(educator)
    slug = client.post("/explorer/", {"code": LOOP, "mode": "call", "call_input": "count(3)"})["Location"]
    slug = slug.rstrip("/").split("/")[-1]
    client.logout()
    view = client.get(f"/explorer/t/{slug}/")
    embed = client.get(f"/explorer/t/{slug}/embed/")
    assert view.status_code == 200 and view["X-Frame-Options"] == "DENY"
    assert embed.status_code == 200 and "X-Frame-Options" not in embed
    page = embed.content.decode()
    assert 'data-testid="explorer"' in page and 'data-testid="nav-login"' not in page  # no site chrome
    assert client.get("/explorer/t/not-a-real-slug/").status_code == 404


def test_presentation_mode_is_a_query_parameter(client, educator):
    client.force_login(educator)
    location = client.post("/explorer/", {"code": LOOP, "mode": "call", "call_input": "count(3)"})["Location"]
    assert 'data-present="1"' in client.get(location + "?present=1").content.decode()
    assert 'data-present=""' in client.get(location).content.decode()


def test_opening_a_candidate_of_a_run_shows_the_models_simulation_checked(client, alice, sim_run):
    client.force_login(alice)
    picker = client.get(f"/explorer/runs/{sim_run.id}/").content.decode()
    assert picker.count('data-testid="explore-candidate"') == 2  # 1 candidate x 2 public tests
    response = client.post(f"/explorer/runs/{sim_run.id}/", {"candidate": 0, "test": 1})
    trace = Trace.objects.get()
    assert trace.run == sim_run and trace.call_input == "add_one(5)" and trace.model_name == "smollm2-test"
    page = client.get(response["Location"]).content.decode()
    assert 'data-testid="verification" data-label="diverges"' in page and "y becomes 7" in page
    assert re.search(r'class="claim claim-false first-divergence"[^>]*data-step="\d+"', page)
    assert 'data-verdict="true"' in page
    again = client.post(f"/explorer/runs/{sim_run.id}/", {"candidate": 0, "test": 1})
    assert again["Location"] == response["Location"] and Trace.objects.count() == 1  # reopened


def test_a_run_pages_step_link_opens_the_step_counted_from_1(client, alice, sim_run):
    """The run page's links carry the claim's step as the trace's index (&step=4); the permalink names
    the step as the stepper shows it, from 1 (#step-5); the offer to open it says so too."""
    client.force_login(alice)
    offer = client.get(f"/explorer/runs/{sim_run.id}/?candidate=0&test=1&step=4").content.decode()
    assert "at step 5</button>" in offer
    opened = client.post(f"/explorer/runs/{sim_run.id}/", {"candidate": 0, "test": 1, "step": 4})
    assert opened["Location"].endswith("#step-5")
    again = client.get(f"/explorer/runs/{sim_run.id}/?candidate=0&test=1&step=4")
    assert again["Location"] == opened["Location"]


def test_runs_of_others_cannot_be_explored(client, bob, sim_run):
    client.force_login(bob)
    assert client.get(f"/explorer/runs/{sim_run.id}/").status_code == 404
    assert client.post(f"/explorer/runs/{sim_run.id}/", {"candidate": 0, "test": 0}).status_code == 404


def test_model_text_is_escaped(client, educator):
    client.force_login(educator)
    location = client.post(
        "/explorer/",
        {
            "code": LOOP,
            "mode": "call",
            "call_input": "count(2)",
            "model_text": "<script>alert(1)</script> total = 1",
        },
    )["Location"]
    page = client.get(location).content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


SIMULATION = (
    "count is called with n = 3. total = 0. Then i = 0, total = 0; i = 1, total = 1; i = 2, total = 4.\n"
    "[ANSWER] assert count(3) == 4 [/ANSWER]"
)


def _no_verifying(*args: object, **kwargs: object) -> None:
    raise AssertionError("a page view verified the model's text again")


def test_the_models_text_is_verified_when_saved_and_never_again_on_a_view(client, educator, monkeypatch):
    """Issue 51: the permalink is public, and each view used to verify the model's text again (16 s of
    CPU for 3,750 characters before claim extraction was made linear)."""
    client.force_login(educator)
    location = client.post(
        "/explorer/", {"code": LOOP, "mode": "call", "call_input": "count(3)", "model_text": SIMULATION}
    )["Location"]
    monkeypatch.setattr("webapp.explorer.context.verify", _no_verifying)
    embed = location + "embed/"
    client.logout()  # the permalink and the embed are public
    for url in (location, location + "?present=1", embed):
        page = client.get(url).content.decode()
        assert 'data-testid="verification" data-label="diverges"' in page
        assert 'data-verdict="false"' in page and 'data-verdict="true"' in page
    stored = Trace.objects.get().verification
    assert stored["label"] == "diverges" and stored["claims"]


def test_a_trace_saved_before_verifications_were_stored_is_verified_on_its_first_view_only(
    client, educator, monkeypatch
):
    client.force_login(educator)
    location = client.post(
        "/explorer/", {"code": LOOP, "mode": "call", "call_input": "count(3)", "model_text": SIMULATION}
    )["Location"]
    Trace.objects.update(verification={})  # as a trace saved before the field
    first = client.get(location).content.decode()
    assert 'data-label="diverges"' in first and Trace.objects.get().verification["label"] == "diverges"
    monkeypatch.setattr("webapp.explorer.context.verify", _no_verifying)
    assert 'data-label="diverges"' in client.get(location).content.decode()
