"""Private problems and pasted code stay out of the shared annotation queue unless opted in (issue 11,
item 3). alice owns a private problem and pastes code; ann1 is a self-registered annotator; a visitor
has no account. A public problem's runs are queued as before (test_annotation_queue.py)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command

from webapp.annotation.models import AnnotationItem
from webapp.runs.models import Run
from webapp.runs.tasks import execute_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sandbox")]

TITLE = "Alice's unreleased exam question"


@pytest.fixture
def private_problem(problem: Any) -> Any:
    problem.title, problem.is_public = TITLE, False
    problem.save()
    return problem


def _solved(user: Any, problem: Any, **settings: Any) -> Run:
    made = Run.objects.create(
        problem=problem, user=user, settings={"k": 1, "turns": 0, "seed": 7, **settings}
    )
    assert execute_run(str(made.id)) == Run.FINISHED
    return made


def test_a_private_problems_run_is_not_queued_and_annotators_never_see_it(
    client, alice, ann1, private_problem
):
    made = _solved(alice, private_problem)
    assert made.simulations.filter(done=True).exists()
    assert not AnnotationItem.objects.exists()
    client.force_login(ann1)
    assert TITLE not in client.get("/annotation/").content.decode()
    assert client.get("/annotation/next/").status_code in (200, 302)
    assert not AnnotationItem.objects.filter(claimed_by=ann1).exists()
    client.logout()
    assert TITLE not in client.get("/annotation/").content.decode()  # a visitor: the log-in page


def test_the_owner_may_opt_a_private_problems_run_in(client, alice, private_problem, monkeypatch):
    queued: list[Any] = []
    monkeypatch.setattr("webapp.runs.runner.enqueue", queued.append)
    client.force_login(alice)
    client.post(
        f"/problems/{private_problem.pk}/solve/",
        {"k": 1, "turns": 0, "temperature": 0.5, "annotate": "on"},
    )
    made = Run.objects.get()
    assert made.settings["annotate"] is True and queued == [made.id]
    assert execute_run(str(made.id)) == Run.FINISHED
    assert AnnotationItem.objects.filter(run=made).count() == made.simulations.filter(done=True).count() > 0


def _pasted(client: Any, user: Any, monkeypatch: Any, **extra: str) -> Run:
    monkeypatch.setattr("webapp.runs.runner.enqueue", lambda run_id: None)
    client.force_login(user)
    code = "def f(x):\n    return x + 1\n"
    client.post("/simulate/", {"code": code, "mode": "call", "code_input": "f(2)", **extra})
    made = Run.objects.get(kind="simulate")
    assert execute_run(str(made.id)) == Run.FINISHED
    return made


def test_pasted_code_is_private_by_default(client, alice, monkeypatch):
    made = _pasted(client, alice, monkeypatch)
    assert made.simulations.filter(done=True).exists() and not AnnotationItem.objects.exists()


def test_pasted_code_is_queued_when_its_author_opts_in(client, alice, monkeypatch):
    made = _pasted(client, alice, monkeypatch, annotate="on")
    assert AnnotationItem.objects.filter(run=made).exists()


def test_enqueue_all_skips_runs_not_shared(alice, private_problem):
    made = Run.objects.create(problem=private_problem, user=alice, status=Run.FINISHED, settings={"k": 1})
    made.candidates.create(index=0, code="def add_one(x):\n    return x + 1\n", done=True)
    made.simulations.create(candidate=0, test=0, text="Line 1: x is 1.", predicted="2", done=True)
    out = io.StringIO()
    call_command("enqueue_annotations", "--all", stdout=out)
    assert not AnnotationItem.objects.exists()
