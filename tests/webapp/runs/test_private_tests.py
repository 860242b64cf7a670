"""Private tests stay private on every view of a run (issue 11, items 1 and 4).

Personas: alice owns the problems; bob is another developer who runs alice's *public* problem; carol
is staff; a visitor has no account and holds only a share link. A problem's private tests (inputs,
expected outputs, and the program's output on them) are shown to the problem's owner and staff only:
not to bob on his own run, not to share-link readers (the run page, its live fragments, its export).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from simulator.problem import Problem as CoreProblem
from webapp.problems.models import Problem
from webapp.runs.models import Execution, Run
from webapp.runs.render import render_message
from webapp.runs.tasks import execute_run

pytestmark = pytest.mark.django_db(transaction=True)

SECRET_IN, SECRET_OUT = "987654321", "987654322"  # the private test: distinctive, found nowhere else


@pytest.fixture
def secret_problem(alice: Any) -> Problem:
    """alice's public problem: one public test and one private test."""
    core = CoreProblem.from_dict(
        {
            "title": "Add one, secretly",
            "statement": "Return `x + 1`.",
            "kind": "call",
            "entry_point": "add_one",
            "tests": [
                {"input": "1", "output": "2"},
                {"input": SECRET_IN, "output": SECRET_OUT, "public": False},
            ],
        }
    )
    return Problem.create_from_core(core, alice, source="manual", is_public=True)


def _finished_run(user: Any, problem: Problem) -> Run:
    """A run of the scripted pipeline with real executions (on the public and private tests)."""
    run = Run.objects.create(
        problem=problem, user=user, settings={"k": 1, "turns": 0, "seed": 7, "real": True}
    )
    assert execute_run(str(run.id)) == Run.FINISHED
    assert Execution.objects.filter(run=run, public=False, output=SECRET_OUT).exists()  # there to leak
    return run


def _export(client: Any, run: Run, token: str | None = None) -> tuple[str, dict[str, Any]]:
    url = f"/runs/{run.id}/export.json" + (f"?token={token}" if token else "")
    response = client.get(url)
    assert response.status_code == 200
    body = response.content.decode()
    return body, json.loads(body)


def _assert_redacted(body: str, data: dict[str, Any]) -> None:
    assert SECRET_IN not in body and SECRET_OUT not in body
    tests = data["problem"]["tests"]
    assert len(tests) == 2 and tests[0]["input"] == "1" and tests[1]["public"] is False
    started = next(e for e in data["events"] if e["type"] == "run_started")
    assert started["payload"]["problem"]["tests"][0]["output"] == "2"
    private_run = next(e for e in data["events"] if e["type"] == "execution" and e["payload"]["test"] == 1)
    assert private_run["payload"]["passed"] is True and "status" not in private_run["payload"]  # issue 51


def test_bobs_export_of_his_run_on_alices_public_problem_hides_the_private_test(client, bob, secret_problem):
    run = _finished_run(bob, secret_problem)
    client.force_login(bob)
    _assert_redacted(*_export(client, run))


def test_a_share_link_export_hides_private_tests_even_of_the_owners_run(client, alice, secret_problem):
    secret_problem.is_public = False
    secret_problem.save()
    run = _finished_run(alice, secret_problem)
    _assert_redacted(*_export(client, run, token=run.share_token))  # a visitor with the link


def test_the_problems_owner_and_staff_export_the_private_tests(client, alice, bob, carol, secret_problem):
    own = _finished_run(alice, secret_problem)
    client.force_login(alice)
    body, data = _export(client, own)
    assert data["problem"]["tests"][1] == {"input": SECRET_IN, "output": SECRET_OUT, "public": False}
    assert SECRET_OUT in json.dumps(next(e for e in data["events"] if e["type"] == "run_started"))
    client.force_login(carol)
    body, _ = _export(client, _finished_run(bob, secret_problem))
    assert SECRET_IN in body and SECRET_OUT in body


def test_the_run_page_hides_private_outputs_from_a_non_owner_and_share_readers(
    client, alice, bob, secret_problem
):
    bobs = _finished_run(bob, secret_problem)
    client.force_login(bob)
    page = client.get(f"/runs/{bobs.id}/").content.decode()
    assert page.count('data-testid="execution-row"') == 2 and SECRET_OUT not in page
    client.logout()
    assert SECRET_OUT not in client.get(f"/share/{bobs.share_token}/").content.decode()
    alices = _finished_run(alice, secret_problem)
    assert SECRET_OUT not in client.get(f"/share/{alices.share_token}/").content.decode()
    client.force_login(alice)
    assert SECRET_OUT in client.get(f"/runs/{alices.id}/").content.decode()


def test_live_execution_fragments_hide_private_outputs_from_a_non_owner(alice, bob, secret_problem):
    def private_execution(run: Run) -> dict[str, Any]:
        row = run.events.get(type="execution", payload__test=1)
        return row.as_event_dict()

    bobs = _finished_run(bob, secret_problem)
    owner, reader = render_message(bobs, private_execution(bobs))
    assert "execution-row" in owner and SECRET_OUT not in owner and SECRET_OUT not in reader
    alices = _finished_run(alice, secret_problem)
    owner, reader = render_message(alices, private_execution(alices))
    assert SECRET_OUT in owner and SECRET_OUT not in reader


# -- item 4: a problem that became private starts no new work for those who may no longer see it ------


def test_retry_and_run_for_real_recheck_that_the_problem_is_still_visible(
    client, alice, bob, secret_problem, no_enqueue
):
    bobs = Run.objects.create(problem=secret_problem, user=bob, status=Run.FINISHED, settings={"k": 1})
    alices = Run.objects.create(problem=secret_problem, user=alice, status=Run.FINISHED, settings={"k": 1})
    secret_problem.is_public = False
    secret_problem.save()

    client.post(f"/runs/{bobs.id}/retry/")  # a visitor: sent to log in
    client.force_login(bob)
    response = client.post(f"/runs/{bobs.id}/retry/", follow=True)
    assert "no longer visible" in response.content.decode()
    client.post(f"/runs/{bobs.id}/real/")
    assert Run.objects.count() == 2 and no_enqueue == []

    client.force_login(alice)  # the owner still may
    client.post(f"/runs/{alices.id}/retry/")
    assert Run.objects.filter(retry_of=alices, user=alice).exists() and len(no_enqueue) == 1
