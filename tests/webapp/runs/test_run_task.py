"""The task function (what the Celery worker and the in-process runner both call), in this process,
against the scripted pipeline double: recording, denormalised rows, crash, cancel, grace period."""

from __future__ import annotations

import pytest
from django.test import override_settings

from webapp.runs.models import Candidate, Execution, RepairTurn, Run, RunEvent, Simulation, Verdict
from webapp.runs.render import render_event
from webapp.runs.tasks import execute_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_records_every_event_in_order_and_the_denormalised_rows(make_run):
    run = make_run(settings={"k": 2, "turns": 1, "seed": 7, "real": True})

    assert execute_run(str(run.id)) == Run.FINISHED

    run.refresh_from_db()
    seqs = list(run.events.values_list("seq", flat=True))
    assert seqs == list(range(len(seqs)))  # gap-free, from 0
    assert run.events.first().type == "run_started" and run.events.last().type == "run_finished"
    assert run.last_seq == seqs[-1]
    assert run.provenance["model"] == "double"
    assert run.stages["solve"]["tokens"] == 34
    assert [c.code.startswith("def add_one") for c in Candidate.objects.filter(run=run)] == [True, True]
    assert Candidate.objects.get(run=run, index=0).selected
    assert Candidate.objects.get(run=run, index=0).score == 2
    assert Simulation.objects.filter(run=run, turn=0, done=True).count() == 4
    assert Verdict.objects.filter(run=run, turn=0, match=True).count() == 2
    turn = RepairTurn.objects.get(run=run, turn=1)
    assert turn.previous_code == "def add_one(x):\n    return x + 0\n"
    assert turn.code == "def add_one(x):\n    return (x) + 0\n"
    assert Execution.objects.filter(run=run).count() == 3  # public and private tests
    assert run.final_code == turn.code and run.final_candidate == 0


def test_it_streams_deltas_into_the_candidate_text(make_run):
    run = make_run(settings={"k": 1, "turns": 0})
    execute_run(str(run.id))
    deltas = RunEvent.objects.filter(run=run, type="candidate_delta").values_list("payload", flat=True)
    assert "".join(d["text"] for d in deltas) == Candidate.objects.get(run=run).text


def test_it_marks_the_run_failed_when_the_pipeline_raises(make_run, monkeypatch):
    monkeypatch.setenv("EXECSIM_DOUBLE_FAIL", "1")
    run = make_run()

    assert execute_run(str(run.id)) == Run.FAILED

    run.refresh_from_db()
    assert "scripted failure" in run.error
    assert run.events.last().type == "run_failed"
    assert list(run.events.values_list("seq", flat=True)) == list(range(run.events.count()))


def test_it_does_not_run_a_run_cancelled_before_it_started(make_run):
    run = make_run(status=Run.CANCELLED)
    assert execute_run(str(run.id)) == Run.CANCELLED
    assert not run.events.exists()


@override_settings(EXECSIM_PIPELINE="webapp.no_such_module.run")
def test_it_fails_the_run_with_a_message_when_the_pipeline_cannot_load(make_run):
    run = make_run()
    assert execute_run(str(run.id)) == Run.FAILED
    run.refresh_from_db()
    assert "could not start" in run.error


def test_it_cancels_when_the_cancel_signal_is_set(make_run, monkeypatch):
    from webapp.runs import cancel

    monkeypatch.setenv("EXECSIM_DOUBLE_DELAY", "0.05")
    run = make_run(settings={"k": 4, "turns": 1})
    cancel.signal(run.id)  # set before it starts: the watcher sees it on its first poll

    assert execute_run(str(run.id)) == Run.CANCELLED

    run.refresh_from_db()
    assert run.events.last().type == "run_cancelled"
    assert not run.events.filter(type="run_finished").exists()


@override_settings(EXECSIM_CANCEL_GRACE_SECONDS=0.3)
def test_it_ends_a_pipeline_that_ignores_the_cancel_after_the_grace_period(make_run, monkeypatch):
    from webapp.runs import cancel

    monkeypatch.setenv("EXECSIM_DOUBLE_DELAY", "0.2")
    monkeypatch.setenv("EXECSIM_DOUBLE_IGNORE_CANCEL", "1")
    run = make_run(settings={"k": 4, "turns": 1})
    cancel.signal(run.id)

    assert execute_run(str(run.id)) == Run.CANCELLED

    run.refresh_from_db()
    assert run.events.last().type == "run_cancelled"
    assert run.events.count() < 10  # stopped early, not after the whole script


def test_it_records_repair_turn_simulations_apart_from_the_candidates(make_run):
    run = make_run(settings={"k": 1, "turns": 2})
    execute_run(str(run.id))
    assert Verdict.objects.filter(run=run, turn=0).count() == 2
    assert Verdict.objects.filter(run=run, turn=2).count() == 2
    assert Simulation.objects.get(run=run, turn=0, candidate=0, test=0).text.startswith("Line 1")
    assert Simulation.objects.get(run=run, turn=1, candidate=0, test=0).text == "again"


def test_it_runs_simulate_my_code_with_a_program(alice):
    run = Run.objects.create(
        kind="simulate",
        user=alice,
        settings={"k": 1, "turns": 0, "mode": "call"},
        code="def f(x):\n    return x + 1\n",
        code_input="f(3)",
    )
    assert execute_run(str(run.id)) == Run.FINISHED
    run.refresh_from_db()
    assert run.events.first().payload["program"] == {"code": run.code, "call": "f(3)", "stdin": None}
    assert run.result["real_output"] == "4"
    assert Execution.objects.get(run=run).verification["first_divergence"]["claimed"] == "2"
    # its page has no Result section, so the run's end sends none (htmx: no oob swap without a target)
    ended = render_event(run.id, run.events.last().as_event_dict())
    assert 'id="run-status"' in ended and 'id="final"' not in ended


def test_stage_times_of_repair_turns_are_kept_apart(make_run):
    from webapp.runs.record import apply_event

    run = make_run()
    apply_event(run, "stage", {"stage": "simulate", "state": "finished", "seconds": 2.0, "tokens": 10})
    apply_event(run, "stage", {"stage": "simulate", "state": "finished", "turn": 1, "seconds": 0.5})
    assert run.stages["simulate"]["seconds"] == 2.0 and run.stages["simulate (turn 1)"]["seconds"] == 0.5
