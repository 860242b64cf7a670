"""Run for real on an existing run: the task (events appended after the run's final event, recorded
and broadcast like the pipeline's, rows replaced), waiting for a run still in progress, the button
(owner and staff only; never on the read-only share page) and the live fragments."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from tests.simulator.pipeline.pipeline_doubles import ExecutorDouble
from webapp.runs import real, runner
from webapp.runs.models import Candidate, Execution, Run, RunEvent
from webapp.runs.record import record_and_publish
from webapp.runs.render import render_event
from webapp.runs.signals import run_ended
from webapp.runs.tasks import execute_real, execute_run

pytestmark = pytest.mark.django_db(transaction=True)

DIVERGENCE = {"claimed": "7", "actual": "1", "text": "x is 7", "line": 1, "step": 1}


@pytest.fixture(autouse=True)
def _fresh_flags():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def queued(monkeypatch) -> list[Any]:
    """A test double for the task runner: records what would be queued, runs nothing."""
    calls: list[Any] = []
    monkeypatch.setattr("webapp.runs.runner.enqueue_real", lambda run_id: calls.append(str(run_id)))
    return calls


@pytest.fixture
def sent(monkeypatch) -> list[dict[str, Any]]:
    """Captures what is broadcast to the runs' Channels groups."""
    messages: list[dict[str, Any]] = []
    monkeypatch.setattr("webapp.broadcast.group_send", lambda group, message: messages.append(message))
    return messages


@pytest.fixture
def finished_run(make_run) -> Run:
    """A run of the scripted pipeline (2 candidates, 1 repair turn, no real execution), ended."""
    run = make_run(settings={"k": 2, "turns": 1, "seed": 7})
    assert execute_run(str(run.id)) == Run.FINISHED
    run.refresh_from_db()
    return run


def test_it_appends_the_real_executions_after_the_final_event(finished_run, sent) -> None:
    before = finished_run.last_seq
    executor = ExecutorDouble(divergence=DIVERGENCE)
    assert real.request(finished_run.id)

    assert execute_real(str(finished_run.id), executor=executor) == "done"

    finished_run.refresh_from_db()
    assert finished_run.status == Run.FINISHED  # still the one final event
    events = list(RunEvent.objects.filter(run=finished_run, seq__gt=before))
    assert [e.seq for e in events] == list(range(before + 1, finished_run.last_seq + 1))
    assert (
        events[0].type == "stage" and events[0].payload["rerun"] and events[0].payload["state"] == "started"
    )
    assert events[-1].type == "stage" and events[-1].payload["state"] == "finished"
    assert [e.type for e in events[1:-1]] == ["execution"] * 9  # (2 candidates + the final) x 3 tests
    # in the page's order (Execution.Meta.ordering): the repaired program right after its candidate
    order = [(e.payload["candidate"], e.payload.get("turn") or 0, e.payload["test"]) for e in events[1:-1]]
    assert order == [(c, turn, t) for c, turn in ((0, 0), (0, 1), (1, 0)) for t in (0, 1, 2)]
    assert [m["event"]["seq"] for m in sent[-len(events) :]] == [e.seq for e in events]  # broadcast, in order
    assert not real.pending(finished_run.id)

    rows = {(x.candidate, x.turn, x.test): x for x in Execution.objects.filter(run=finished_run)}
    assert len(rows) == 9
    assert not rows[(0, 0, 0)].passed and rows[(1, 0, 0)].passed  # x + 0 is wrong, x + 1 is right
    assert rows[(0, 1, 2)].passed is False and rows[(0, 1, 2)].public is False  # the repaired program
    assert rows[(1, 0, 2)].passed and rows[(1, 0, 2)].verification is None  # private: never simulated
    first = rows[(0, 0, 0)].verification["first_divergence"]
    assert (first["claimed"], first["actual"], first["text"]) == ("7", "1", "x is 7")
    # the stored NLEX that won each verdict was checked: candidates on turn 0, the final on turn 1
    assert executor.checked.count("again") == 2 and len(executor.checked) == 6
    summary = {(r["candidate"], r["turn"]): r for r in finished_run.stages["execute"]["results"]}
    assert summary[(1, 0)]["passed_public"] == 2 and summary[(1, 0)]["passed_private"] == 1
    assert summary[(0, 1)]["final"] is True and summary[(0, 0)]["final"] is False


def test_programs_that_ran_for_real_are_not_run_again(finished_run, sent) -> None:
    """Issue 52: the button is offered only for programs that have not run on every test, and a
    request for a run whose programs all ran runs nothing."""
    assert real.request(finished_run.id)
    assert execute_real(str(finished_run.id), executor=ExecutorDouble()) == "done"
    assert real.programs_for(finished_run) == []
    assert real.request(finished_run.id)
    assert execute_real(str(finished_run.id), executor=ExecutorDouble()) == "nothing"
    assert Execution.objects.filter(run=finished_run).count() == 9
    assert RunEvent.objects.filter(run=finished_run, type="execution").count() == 9


def test_a_copy_of_a_program_that_ran_for_real_is_not_offered_again(make_run) -> None:
    """Four identical candidates, the final one run on every test with the run: the other three are
    the same program, which runs the same way (issue 52)."""
    run = make_run(status=Run.FINISHED, settings={"k": 3, "turns": 0}, last_seq=5)
    code = "def add_one(x):\n    return x + 1\n"
    for index in range(3):
        Candidate.objects.create(run=run, index=index, code=code, done=True, selected=index == 1)
    Candidate.objects.create(run=run, index=3, code="def add_one(x):\n    return 1 + x\n", done=True)
    assert {p.candidate for p in real.programs_for(run)} == {0, 1, 2, 3}
    Execution.objects.create(run=run, candidate=1, test=0, status="ok", output="2", passed=True, expected="2")
    assert [p.candidate for p in real.programs_for(run)] == [3]  # a new program still runs


def test_it_waits_for_a_run_still_in_progress(make_run, queued) -> None:
    run = make_run(status=Run.RUNNING, last_seq=4)
    Candidate.objects.create(run=run, index=0, code="def add_one(x):\n    return x + 1\n")
    assert real.request(run.id)

    assert execute_real(str(run.id), executor=ExecutorDouble()) == "waiting"

    assert queued == []  # not polled: the run's end starts it
    assert not RunEvent.objects.filter(run=run).exists() and real.pending(run.id)
    final = {"run_id": str(run.id), "seq": 5, "type": "run_finished", "payload": {}}
    assert record_and_publish(run.id, final)
    assert queued == [str(run.id)]


def test_it_does_nothing_unless_asked_or_without_programs(make_run, finished_run) -> None:
    assert execute_real(str(finished_run.id), executor=ExecutorDouble()) == "nothing"  # not asked
    failed_early = make_run(status=Run.FAILED)
    assert real.request(failed_early.id)
    assert execute_real(str(failed_early.id), executor=ExecutorDouble()) == "nothing"
    assert not real.pending(failed_early.id)


def test_events_after_the_end_are_refused_while_the_run_is_active_and_for_final_types(make_run) -> None:
    running = make_run(status=Run.RUNNING, last_seq=2)
    execution = {"candidate": 0, "test": 0, "public": True, "status": "ok", "output": "2", "passed": True}
    event = {"run_id": str(running.id), "seq": 3, "type": "execution", "payload": execution}
    assert not record_and_publish(running.id, event, after_end=True)  # the pipeline owns the next seqs
    ended = make_run(status=Run.FINISHED, last_seq=2)
    final = {"run_id": str(ended.id), "seq": 3, "type": "run_failed", "payload": {"error": "x"}}
    assert not record_and_publish(ended.id, final, after_end=True)
    assert record_and_publish(ended.id, {**event, "run_id": str(ended.id)}, after_end=True)
    assert Execution.objects.get(run=ended).passed


# -- the button ---------------------------------------------------------------------------------------


def test_the_owner_runs_it_for_real_from_the_run_page(client, alice, finished_run, queued) -> None:
    client.force_login(alice)
    page = client.get(f"/runs/{finished_run.id}/").content.decode()
    assert 'data-testid="run-real">Run for real</button>' in page and "ws-connect" not in page

    response = client.post(f"/runs/{finished_run.id}/real/")

    # back where the button was (without JavaScript; the page's own request swaps the panel in place)
    assert response.status_code == 302 and response["Location"] == f"/runs/{finished_run.id}/#run-real"
    assert queued == [str(finished_run.id)] and real.pending(finished_run.id)
    page = client.get(f"/runs/{finished_run.id}/").content.decode()
    assert 'data-testid="run-real-pending"' in page and 'data-testid="run-real"' not in page
    assert f'ws-connect="/ws/runs/{finished_run.id}/?last_seq={finished_run.last_seq}"' in page  # live


def test_a_second_click_while_one_is_under_way_queues_nothing(client, alice, finished_run, queued) -> None:
    client.force_login(alice)
    client.post(f"/runs/{finished_run.id}/real/")
    client.post(f"/runs/{finished_run.id}/real/")
    assert len(queued) == 1


def test_only_the_owner_and_staff_can_run_it_for_real(client, bob, carol, finished_run, queued) -> None:
    assert client.post(f"/runs/{finished_run.id}/real/").status_code == 302  # to the log-in page
    client.force_login(bob)
    assert client.post(f"/runs/{finished_run.id}/real/").status_code == 404
    assert queued == [] and not real.pending(finished_run.id)
    client.force_login(carol)
    assert client.post(f"/runs/{finished_run.id}/real/").status_code == 302
    assert queued == [str(finished_run.id)]


def test_the_get_method_is_refused(client, alice, finished_run, queued) -> None:
    client.force_login(alice)
    assert client.get(f"/runs/{finished_run.id}/real/").status_code == 405
    assert queued == []


def test_the_read_only_share_page_has_no_button(client, finished_run) -> None:
    page = client.get(f"/share/{finished_run.share_token}/").content.decode()
    assert 'data-testid="run-real-panel"' in page and 'data-testid="run-real"' not in page


def test_the_page_shows_the_results_after_it_ran(client, alice, finished_run, sent) -> None:
    real.request(finished_run.id)
    execute_real(str(finished_run.id), executor=ExecutorDouble(divergence=DIVERGENCE))
    client.force_login(alice)
    page = client.get(f"/runs/{finished_run.id}/").content.decode()
    assert page.count('data-testid="execution-row"') == 9
    assert 'id="exec-0-t1-2"' in page and "(turn 1)" in page
    assert page.count('data-testid="real-summary-row"') == 3 and "after repair turn 1 (final)" in page
    # every program ran for real: nothing is offered again (issue 52)
    assert 'data-testid="run-real"' not in page and 'data-testid="run-real-done"' in page


def test_the_live_fragments_append_the_new_rows_then_show_them_all_in_order(finished_run, sent) -> None:
    """Rows that ran before stay (only programs without rows run); the new ones come appended, and the
    end of the Run for real shows every row in the page's order."""
    before = finished_run.last_seq
    real.request(finished_run.id)
    execute_real(str(finished_run.id), executor=ExecutorDouble())
    appended = list(RunEvent.objects.filter(run=finished_run, seq__gt=before))
    started, first, finished = appended[0], appended[1], appended[-1]
    html = render_event(finished_run.id, started.as_event_dict())
    assert 'id="executions-rows"' not in html  # nothing is emptied
    assert 'id="run-real" class="panel" data-testid="run-real-panel" hx-swap-oob="true"' in html
    html = render_event(finished_run.id, first.as_event_dict())
    assert 'hx-swap-oob="beforeend:#executions-rows"' in html and 'data-testid="execution-row"' in html
    html = render_event(finished_run.id, finished.as_event_dict(), readonly=True)
    assert 'data-testid="real-summary"' in html and 'data-testid="run-real"' not in html
    rows = html.split('<div id="executions-rows" hx-swap-oob="true">', 1)[1]
    assert rows.count('data-testid="execution-row"') == 9


def _cell(html: str, dom: str) -> str:
    """The HTML of verdict cell ``dom`` (up to the next cell) in a page or a fragment."""
    assert f'id="{dom}"' in html, f"no cell {dom}"
    return html.split(f'id="{dom}"', 1)[1].split('data-testid="verdict-cell"', 2)[1]


def _execution_event(run: Run, candidate: int, turn: int, test: int) -> dict[str, Any]:
    return next(
        e.as_event_dict()
        for e in RunEvent.objects.filter(run=run, type="execution")
        if (e.payload["candidate"], e.payload.get("turn") or 0, e.payload["test"]) == (candidate, turn, test)
    )


def test_running_it_for_real_afterwards_says_in_each_matrix_cell_what_really_came_out(
    client, alice, finished_run, sent
) -> None:
    client.force_login(alice)
    page = client.get(f"/runs/{finished_run.id}/").content.decode()
    assert "really:" not in _cell(page, "verdict-0-0")  # the run itself executed nothing
    real.request(finished_run.id)
    execute_real(str(finished_run.id), executor=ExecutorDouble(divergence=DIVERGENCE))
    rows = {(x.candidate, x.turn, x.test): x for x in Execution.objects.filter(run=finished_run)}

    # live: a program's execution on a public test fills that program's cell, out of band
    html = render_event(finished_run, _execution_event(finished_run, 0, 0, 0))
    cell = _cell(html, "verdict-0-0")
    assert 'hx-swap-oob="true"' in cell and "really: <code>1</code> (ok, fails)" in cell
    assert 'data-label="diverges"' in cell  # and how its simulation held up
    assert "really: <code>2</code> (ok, passes)" in _cell(
        render_event(finished_run, _execution_event(finished_run, 1, 0, 0)), "verdict-1-0"
    )
    # the repaired program's cell (repair turn 1), and none for a private test: it has no cell
    repaired = render_event(finished_run, _execution_event(finished_run, 0, 1, 1))
    assert "really:" in _cell(repaired, "rverdict-1-1")
    assert "verdict-cell" not in render_event(finished_run, _execution_event(finished_run, 0, 0, 2))
    assert rows[(0, 0, 2)].public is False

    # on reload: the same words, from the same rows
    page = client.get(f"/runs/{finished_run.id}/").content.decode()
    for c, t in ((0, 0), (0, 1), (1, 0), (1, 1)):
        x = rows[(c, 0, t)]
        really = f"really: <code>{x.output}</code> (ok, {'passes' if x.passed else 'fails'})"
        assert really in _cell(page, f"verdict-{c}-{t}")
    assert "really:" in _cell(page, "rverdict-1-0")


def test_when_the_run_ends_its_run_for_real_panel_follows(make_run, sent) -> None:
    """A run that executes its final program itself (settings real, Simulate my code against a
    problem): the run's end brings the panel with the judge's banner, as a reload shows it."""
    run = make_run(status=Run.FINISHED, final_candidate=0, final_code="def add_one(x):\n    return x + 1\n")
    for test, (output, passed) in enumerate((("2", True), ("6", True), ("0", True))):
        Execution.objects.create(
            run=run, candidate=0, test=test, public=test < 2, status="ok", output=output, passed=passed,
            expected=output,
        )  # fmt: skip
    html = render_event(run, {"run_id": str(run.id), "seq": 9, "type": "run_finished", "payload": {}})
    panel = html.split('id="run-real"', 1)[1].split("</section>", 1)[0]
    assert 'hx-swap-oob="true"' in panel
    assert "#0</b>: Accepted 3/3 (2 public, 1 private)" in panel
    # the status panel, swapped at the same time, heads the page with the final program's verdict
    status = html.split('id="run-status"', 1)[1].split("</section>", 1)[0]
    assert 'data-testid="status-judgement" data-verdict="accepted"' in status
    assert "Accepted 3/3 (2 public, 1 private) · " in status


def test_the_panel_says_when_a_run_for_real_asked_for_during_the_run_starts(
    client, alice, make_run, queued
) -> None:
    run = make_run(status=Run.RUNNING, last_seq=2)
    Candidate.objects.create(run=run, index=0, code="def add_one(x):\n    return x + 1\n")
    client.force_login(alice)
    page = client.post(f"/runs/{run.id}/real/", follow=True).content.decode()
    pending = page.split('data-testid="run-real-pending">', 1)[1].split("</p>", 1)[0]
    assert "once this run ends" in pending
    ended = {"run_id": str(run.id), "seq": 3, "type": "run_finished", "payload": {}}
    assert record_and_publish(run.id, ended)
    html = render_event(run.id, RunEvent.objects.get(run=run, seq=3).as_event_dict())
    pending = html.split('data-testid="run-real-pending">', 1)[1].split("</p>", 1)[0]
    assert "for real" in pending and "once this run ends" not in pending  # it is under way now


@pytest.mark.parametrize("end", ["run_failed", "run_cancelled"])
def test_a_run_that_ends_before_any_code_says_there_is_nothing_to_run_at_once(
    client, alice, make_run, queued, end
) -> None:
    """Run for real asked for during a run that then fails (the model server is down) or is cancelled
    before any candidate had code: its final event drops the request and says so, nothing is queued,
    and a reload reads the same."""
    run = make_run(status=Run.RUNNING, last_seq=2)
    client.force_login(alice)
    client.post(f"/runs/{run.id}/real/")
    assert real.pending(run.id)
    assert record_and_publish(run.id, {"run_id": str(run.id), "seq": 3, "type": end, "payload": {}})
    live = render_event(run.id, RunEvent.objects.get(run=run, seq=3).as_event_dict())
    page = client.get(f"/runs/{run.id}/").content.decode()
    for html in (live, page):
        panel = html.split('id="run-real"', 1)[1].split("</section>", 1)[0]
        assert 'data-testid="run-real-nothing"' in panel and "Running" not in panel
        assert 'data-testid="run-real"' not in panel  # no button that would do nothing
    assert not real.pending(run.id) and queued == []


@pytest.fixture
def ended() -> Iterator[list[tuple[str, str]]]:
    """What the run_ended signal is sent with: (run id, status), in order."""
    calls: list[tuple[str, str]] = []

    def spy(sender: Any, run: Run, **kwargs: Any) -> None:
        calls.append((str(run.id), run.status))

    run_ended.connect(spy, dispatch_uid="test.ended")
    yield calls
    run_ended.disconnect(dispatch_uid="test.ended")


@override_settings(EXECSIM_STALE_RUN_SECONDS=30)
@pytest.mark.parametrize("has_code", [True, False], ids=["starts", "drops"])
def test_a_run_reaped_as_dead_starts_the_run_for_real_asked_for_during_it(
    make_run, queued, ended, has_code
) -> None:
    """The reaper ends a run whose worker stopped sending heartbeats; like any other end it sends
    run_ended, whose receiver (runner.start_pending_real) starts the Run for real asked for meanwhile,
    or finds it already dropped when no candidate had code."""
    stale = timezone.now() - timezone.timedelta(seconds=31)
    run = make_run(status=Run.RUNNING, heartbeat_at=stale, last_seq=2)
    if has_code:
        Candidate.objects.create(run=run, index=0, code="def add_one(x):\n    return x + 1\n")
    assert real.request(run.id)

    call_command("reap_runs")  # what the reaper process runs every 30 s

    assert ended == [(str(run.id), Run.FAILED)]
    assert queued == ([str(run.id)] if has_code else [])
    assert real.pending(run.id) is has_code  # the task clears it when it has run


def test_only_the_run_ended_signal_starts_a_pending_run_for_real(make_run, queued) -> None:
    """The recording layer knows nothing of the runner: without the receiver connected, a run's end
    queues nothing (the receiver is put back as RunsConfig.ready connects it)."""
    run = make_run(status=Run.RUNNING, last_seq=2)
    Candidate.objects.create(run=run, index=0, code="def add_one(x):\n    return x + 1\n")
    assert real.request(run.id)
    assert run_ended.disconnect(dispatch_uid="runs.start_pending_real")
    try:
        assert record_and_publish(
            run.id, {"run_id": str(run.id), "seq": 3, "type": "run_finished", "payload": {}}
        )
    finally:
        run_ended.connect(runner.start_pending_real, dispatch_uid="runs.start_pending_real")
    assert queued == [] and real.pending(run.id)


def test_no_message_outlives_the_run_for_real_it_announced(client, alice, finished_run, queued) -> None:
    """The panel says a run for real is under way, and its live fragments replace it when it ends; a
    flash message above the page would stay there, stale."""
    client.force_login(alice)
    page = client.post(f"/runs/{finished_run.id}/real/", follow=True).content.decode()
    assert 'data-testid="run-real-pending"' in page
    assert "for real now" not in page and 'data-testid="messages"' not in page


NLEX = "x is 7, so [ANSWER] 7"
CLAIMS = [
    {"kind": "value", "text": "x is 7", "start": 0, "end": 6, "verdict": "false", "step": 1, "actual": "1"},
    {"kind": "answer", "text": "7", "start": 20, "end": 21, "verdict": "false", "step": 3, "actual": "2"},
]


@pytest.fixture
def checked_run(make_run) -> Run:
    """A finished run whose one program's simulation of test 1 was checked against its real run, claim
    by claim (sample 0 is the judged one; sample 1, of a run made when several were sampled, says
    something else)."""
    from simulator.nlex.verify import Verification
    from webapp.runs.models import Candidate, Simulation, Verdict

    run = make_run(status=Run.FINISHED, settings={"k": 1, "turns": 0, "seed": 7}, last_seq=5)
    Candidate.objects.create(run=run, index=0, code="def add_one(x):\n    return x + 1\n", done=True)
    for sample, text in enumerate((NLEX, "x is 1, so [ANSWER] 2")):
        Simulation.objects.create(run=run, candidate=0, test=0, sample=sample, text=text, done=True)
    Verdict.objects.create(run=run, candidate=0, test=0, expected="2", simulated="7", match=False)
    verification = Verification.from_dict(
        {"status": "checked", "answer": {"verdict": "false"}, "claims": CLAIMS}
    )
    Execution.objects.create(
        run=run, candidate=0, test=0, status="ok", output="2", passed=True, expected="2",
        verification=verification.to_dict(),
    )  # fmt: skip
    return run


def _sim_text(html: str, dom: str) -> str:
    return html.split(f'id="{dom}-text"', 1)[1].split("</pre>", 1)[0]


def test_the_judged_simulation_shows_its_claims_coloured_with_links_to_their_steps(
    client, alice, checked_run
) -> None:
    client.force_login(alice)
    page = client.get(f"/runs/{checked_run.id}/").content.decode()
    judged = _sim_text(page, "sim-0-0-0")
    link = f"/explorer/runs/{checked_run.id}/?candidate=0&amp;turn=0&amp;test=0&amp;step=1"
    assert f'<a class="claim claim-false first-divergence" href="{link}"' in judged
    assert ">x is 7</a>" in judged and 'data-verdict="false"' in judged
    assert 'data-testid="claim"' not in _sim_text(page, "sim-0-0-1")  # not the text that was checked
    shared = client.get(f"/share/{checked_run.share_token}/").content.decode()
    assert '<span class="claim claim-false first-divergence"' in _sim_text(shared, "sim-0-0-0")
    assert "href=" not in _sim_text(shared, "sim-0-0-0")  # share-link readers get no explorer links

    # live: the execution that checked it brings the coloured text
    event = {
        "run_id": str(checked_run.id),
        "seq": 6,
        "type": "execution",
        "payload": {"candidate": 0, "test": 0},
    }
    html = render_event(checked_run, event)
    assert 'id="sim-0-0-0-text" hx-swap-oob="true"' in html and link in _sim_text(html, "sim-0-0-0")
    assert "sim-0-0-1-text" not in html
    assert "href=" not in _sim_text(render_event(checked_run, event, readonly=True), "sim-0-0-0")


def test_the_pages_own_request_gets_the_panel_in_place_and_a_socket(
    client, alice, finished_run, queued
) -> None:
    """The button's request from the page (htmx): no reload, so the reader keeps their place; the panel
    says how far it got, where the results will appear, and the page, which had no socket on an ended
    run, gets one (issue 52)."""
    client.force_login(alice)
    response = client.post(f"/runs/{finished_run.id}/real/", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200 and queued == [str(finished_run.id)]
    assert 'id="run-real"' in body and 'data-testid="run-real-pending"' in body
    assert 'data-testid="run-real-progress"' in body and "0 of 9 tests run" in body  # 3 programs x 3 tests
    live = f'id="run-live" hidden ws-connect="/ws/runs/{finished_run.id}/?last_seq={finished_run.last_seq}"'
    assert live in body and 'hx-swap-oob="true"' in body
