"""Run pages: solve starts a run, the page renders from the database, share link, cancel, retry,
export, history, stale runs, the model status fragment, escaping of model output."""

from __future__ import annotations

import json
import re

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from webapp.runs.models import Run
from webapp.runs.tasks import execute_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_solving_creates_a_run_with_settings_and_a_recorded_seed(client, alice, problem, no_enqueue):
    client.force_login(alice)
    response = client.post(f"/problems/{problem.pk}/solve/", {"k": 3, "turns": 1, "temperature": 0.5})
    run = Run.objects.get()
    assert response["Location"] == f"/runs/{run.id}/"
    assert run.settings["k"] == 3 and run.seed is not None and run.settings["seed"] == run.seed
    assert no_enqueue == [run.id]


def test_solving_rejects_out_of_range_settings(client, alice, problem, no_enqueue):
    client.force_login(alice)
    client.post(f"/problems/{problem.pk}/solve/", {"k": 999, "turns": 1, "temperature": 0.5})
    assert not Run.objects.exists() and no_enqueue == []


def test_a_finished_run_renders_from_the_database(client, alice, make_run):
    run = make_run(settings={"k": 2, "turns": 1, "real": True})
    execute_run(str(run.id))
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert page.count('data-testid="candidate-card"') == 2
    # a cell's colour is what really came out; what the simulation predicted is a mark of its own
    assert 'data-testid="mark-predicted" data-predicted="pass"' in page
    assert 'id="verdict-1-0" class="cell" data-testid="verdict-cell" data-match="false"' in page
    assert 'data-testid="selected-candidate">0<' in page
    assert 'id="repair-1-body"' in page and "repaired" in page  # the diff against the previous program
    assert page.count('data-testid="execution-row"') == 3
    assert 'data-testid="final-code"' in page
    assert "ws-connect" not in page  # nothing left to stream


def test_model_and_user_text_is_escaped(client, alice, make_run):
    run = make_run()
    execute_run(str(run.id))
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert "<script>alert('x')</script>" not in page
    assert "&lt;script&gt;" in page


def test_an_active_run_page_connects_to_its_websocket_from_its_last_seq(client, alice, make_run):
    run = make_run(status=Run.RUNNING, last_seq=4, heartbeat_at=timezone.now())
    client.force_login(alice)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert f'ws-connect="/ws/runs/{run.id}/?last_seq=4"' in page


def test_runs_are_private_to_their_owner_and_staff(client, bob, carol, make_run):
    run = make_run()
    client.force_login(bob)
    assert client.get(f"/runs/{run.id}/").status_code == 404
    assert client.get(f"/runs/{run.id}/export.json").status_code == 404
    client.force_login(carol)
    assert client.get(f"/runs/{run.id}/").status_code == 200


def test_the_share_link_is_read_only_and_needs_the_token(client, make_run):
    run = make_run(status=Run.RUNNING, heartbeat_at=timezone.now())
    page = client.get(f"/share/{run.share_token}/").content.decode()
    assert 'data-testid="readonly-note"' in page and 'data-testid="cancel-run"' not in page
    assert len(run.share_token) >= 32
    assert client.get("/share/not-the-token/").status_code == 404
    assert client.get(f"/runs/{run.id}/export.json?token={run.share_token}").status_code == 200


def test_export_has_the_run_and_its_events(client, alice, make_run):
    run = make_run()
    execute_run(str(run.id))
    client.force_login(alice)
    data = json.loads(client.get(f"/runs/{run.id}/export.json").content)
    assert data["status"] == "finished" and data["settings"]["k"] == 2
    assert [e["seq"] for e in data["events"]] == list(range(len(data["events"])))
    assert data["provenance"]["model"] == "double"
    assert data["problem"]["entry_point"] == "add_one"


def test_cancel_a_queued_run_ends_it_at_once(client, alice, make_run):
    run = make_run()
    client.force_login(alice)
    client.post(f"/runs/{run.id}/cancel/")
    run.refresh_from_db()
    assert run.status == Run.CANCELLED and run.cancel_requested
    assert execute_run(str(run.id)) == Run.CANCELLED  # a worker picking it up later does nothing


def test_cancel_a_running_run_sets_the_flag_and_the_signal(client, alice, make_run):
    from webapp.runs import cancel

    run = make_run(status=Run.RUNNING, heartbeat_at=timezone.now())
    client.force_login(alice)
    client.post(f"/runs/{run.id}/cancel/")
    run.refresh_from_db()
    assert run.cancel_requested and cancel.signalled(run.id)
    cancel.clear(run.id)


def test_retry_starts_a_new_run_with_the_same_settings(client, alice, make_run, no_enqueue):
    old = make_run(status=Run.FAILED)
    client.force_login(alice)
    response = client.post(f"/runs/{old.id}/retry/")
    new = Run.objects.exclude(id=old.id).get()
    assert response["Location"] == f"/runs/{new.id}/"
    assert new.retry_of == old and new.settings == old.settings and new.status == Run.QUEUED


@override_settings(EXECSIM_STALE_RUN_SECONDS=30)
def test_a_run_without_heartbeat_is_marked_failed_by_the_reaper(client, alice, make_run):
    run = make_run(
        status=Run.RUNNING, heartbeat_at=timezone.now() - timezone.timedelta(seconds=31), last_seq=2
    )
    client.force_login(alice)
    assert client.get(f"/runs/{run.id}/").status_code == 200
    run.refresh_from_db()
    assert run.status == Run.RUNNING  # reading a page writes nothing
    call_command("reap_runs")
    page = client.get(f"/runs/{run.id}/").content.decode()
    run.refresh_from_db()
    assert run.status == Run.FAILED and "stopped responding" in run.error
    assert run.events.get().seq == 3 and run.events.get().type == "run_failed"
    assert 'data-testid="retry-run"' in page


@override_settings(EXECSIM_STALE_RUN_SECONDS=30)
def test_a_run_with_a_fresh_heartbeat_is_left_alone(client, alice, make_run):
    run = make_run(status=Run.RUNNING, heartbeat_at=timezone.now() - timezone.timedelta(seconds=5))
    client.force_login(alice)
    call_command("reap_runs")
    run.refresh_from_db()
    assert run.status == Run.RUNNING


def test_history_lists_my_runs_only(client, alice, bob, make_run):
    mine = make_run()
    client.force_login(bob)
    assert mine not in client.get("/runs/").context["runs"]
    client.force_login(alice)
    assert mine in client.get("/runs/").context["runs"]


def test_history_comes_a_page_at_a_time(client, alice, make_run):
    from webapp.pages import PAGE_SIZE

    runs = [make_run() for _ in range(PAGE_SIZE + 3)]
    client.force_login(alice)
    first = client.get("/runs/")
    assert len(first.context["runs"]) == PAGE_SIZE and 'data-testid="page-next"' in first.content.decode()
    assert list(client.get("/runs/?page=2").context["runs"]) == runs[:3][::-1]  # the oldest come last


def test_history_gives_each_run_its_final_programs_verdict(client, alice, make_run):
    """As a judge's submissions list does: the final program's real runs, the verdict and the count,
    naming no test (a private test's output stays on the run page, shown to those who may see it)."""
    from webapp.runs.models import Execution

    judged, repaired, not_run = (make_run(status=Run.FINISHED, final_candidate=1) for _ in range(3))
    for test, public, passed in ((0, True, True), (1, True, True), (2, False, False)):
        fields = {"public": public, "status": "ok", "passed": passed, "output": "secret-out", "expected": "9"}
        Execution.objects.create(run=judged, candidate=1, test=test, **fields)
        Execution.objects.create(run=judged, candidate=0, test=test, **{**fields, "passed": True})
        Execution.objects.create(run=repaired, candidate=1, test=test, **fields)  # the candidate as written
        Execution.objects.create(run=repaired, candidate=1, turn=2, test=test, **{**fields, "passed": True})
    client.force_login(alice)
    page = client.get("/runs/").content.decode()
    verdicts = re.findall(r'data-testid="run-verdict">(.*?)</td>', page)
    cells = {
        str(run.id): cell for run, cell in zip(client.get("/runs/").context["runs"], verdicts, strict=True)
    }
    assert "Wrong answer 2/3" in cells[str(judged.id)] and "Accepted 3/3" in cells[str(repaired.id)]
    assert "Accepted" not in cells[str(not_run.id)] and "—" in cells[str(not_run.id)]
    assert "secret-out" not in page


def test_the_model_status_fragment_says_down_and_the_queue_length(client, make_run, monkeypatch):
    monkeypatch.setenv("EXECSIM_MODEL_URL", "http://127.0.0.1:9/v1")  # nothing listens on the discard port
    make_run()
    fragment = client.get("/status/model/", headers={"HX-Request": "true"}).content.decode()
    assert 'data-up="false"' in fragment and 'data-testid="queue-length">1<' in fragment
    assert "<html" not in fragment


def test_the_header_link_opens_a_styled_page_that_hides_the_server_from_visitors(client, alice, monkeypatch):
    monkeypatch.setenv("EXECSIM_MODEL_URL", "http://127.0.0.1:9/v1")
    page = client.get("/status/model/").content.decode()
    assert "<html" in page and 'data-testid="model-status-page"' in page and "app.css" in page
    assert "127.0.0.1:9" not in page  # a visitor
    client.force_login(alice)
    assert "127.0.0.1:9" in client.get("/status/model/").content.decode()


def test_a_run_that_ends_refreshes_the_headers_counts_at_once(make_run):
    from webapp.runs.render import render_event

    run = make_run(status="finished")
    html = render_event(run, {"run_id": str(run.id), "seq": 3, "type": "run_finished", "payload": {}})
    assert 'hx-target="#model-status"' in html and 'hx-trigger="load"' in html


def test_simulate_my_code_creates_a_simulate_run(client, alice, no_enqueue):
    client.force_login(alice)
    response = client.post(
        "/simulate/", {"code": "def f(x):\n    return x\n", "mode": "call", "code_input": "f(2)"}
    )
    run = Run.objects.get()
    assert response["Location"] == f"/runs/{run.id}/" and run.kind == "simulate" and run.problem is None
    assert no_enqueue == [run.id]
    execute_run(str(run.id))
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert 'data-testid="simulate-input"' in page and 'data-testid="divergence"' in page
    # a pasted program has no expected output: the column says whether the simulation got it right
    assert "<span>output as simulated</span>" in page and "<span>passed</span>" not in page
    assert "<span>simulated</span>" in page and "<span>expected</span>" not in page  # the value it said


def test_a_problems_page_leads_to_trying_your_own_program_on_it(client, alice, bob, problem):
    """As a judge's problem page leads to submitting code: Simulate my code with the problem chosen
    (the problem must be one the user may see; another's private problem is not offered)."""
    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    assert f'href="/simulate/?problem={problem.pk}" data-testid="try-own-code"' in page
    form = client.get(f"/simulate/?problem={problem.pk}").content.decode()
    assert f'<option value="{problem.pk}" selected>' in form
    assert "def add_one(a):\n    pass\n</textarea>" in form  # the signature to fill in
    problem.is_public = False
    problem.save()
    client.force_login(bob)
    form = client.get(f"/simulate/?problem={problem.pk}").content.decode()
    assert f'value="{problem.pk}"' not in form and "add_one" not in form
    assert '<option value="" selected>' in client.get("/simulate/?problem=abc").content.decode()  # none


@pytest.mark.parametrize(
    ("code_input", "said"),
    [
        ("", "choose stdin for a program that reads its input or only prints"),
        ("f(2", "not a Python expression"),
    ],
)
def test_a_call_that_is_missing_or_does_not_parse_is_asked_for_on_the_form(
    client, alice, no_enqueue, code_input, said
):
    """A script pasted with the default mode (call) and no call used to start a run that failed at once;
    now the form says what to give, and keeps the code."""
    client.force_login(alice)
    code = "print(sum([1, 2, 3]))\n"
    response = client.post("/simulate/", {"code": code, "mode": "call", "code_input": code_input})
    page = response.content.decode()
    assert response.status_code == 200 and said in page and "print(sum([1, 2, 3]))" in page
    assert not Run.objects.exists() and no_enqueue == []
    response = client.post("/simulate/", {"code": code, "mode": "stdin", "code_input": ""})
    assert response.status_code == 302 and Run.objects.get().settings["mode"] == "stdin"
