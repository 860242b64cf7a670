"""A user's pasted program stays theirs unless they share it, also when it is simulated against a public
problem (issue 51, item 1).

"Simulate my code" with a problem chosen makes a solve run on that problem whose only candidate is the
user's own program (``Run.code``). A public problem's runs go to the shared annotation queue, but that
rule is for the model's programs: a pasted one goes there only when its author ticked "Share with
annotators". bob pastes code against alice's public problem; ann1 is an annotator; a visitor has no
account. Items such a run put in the queue before this was fixed are withdrawn by a migration
(``withdraw_unshared``): the annotator's item view then answers 404.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command

from tests.webapp.doubles import scripted_pipeline
from webapp.annotation.models import AnnotationItem
from webapp.runs.models import Run
from webapp.runs.privacy import shared_for_annotation
from webapp.runs.tasks import execute_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sandbox")]

OWN = "def add_one(x):\n    bobs_secret_idea = x + 1\n    return bobs_secret_idea\n"


async def pasted_pipeline(problem: Any, settings: Any, client: Any, *, code: str | None = None, **extra: Any):
    """The scripted pipeline (``tests.webapp.doubles``), given the user's program as the real one is
    (its candidates stay the double's: what matters here is whose run they are)."""
    async for event in scripted_pipeline(problem, settings, client, **extra):
        yield event


@pytest.fixture(autouse=True)
def _pipeline_taking_code(settings: Any) -> None:
    settings.EXECSIM_PIPELINE = f"{__name__}.pasted_pipeline"


def _pasted_against(client: Any, user: Any, problem: Any, monkeypatch: Any, **extra: str) -> Run:
    """``user`` simulates his program against ``problem`` through the Simulate form; the run ends."""
    monkeypatch.setattr("webapp.runs.runner.enqueue", lambda run_id: None)
    monkeypatch.setattr("webapp.runs.runner.enqueue_real", lambda run_id: None)
    client.force_login(user)
    form = {"code": OWN, "mode": "call", "code_input": "", "problem": problem.pk, **extra}
    assert client.post("/simulate/", form).status_code == 302
    made = Run.objects.get(code=OWN, user=user)
    assert made.problem == problem and made.problem.is_public
    assert execute_run(str(made.id)) == Run.FINISHED
    made.refresh_from_db()
    assert made.simulations.filter(done=True).exists()  # there to leak
    return made


def test_pasted_code_against_a_public_problem_is_not_queued_unless_shared(
    client, bob, ann1, problem, monkeypatch
):
    made = _pasted_against(client, bob, problem, monkeypatch)
    assert not AnnotationItem.objects.exists()
    assert not shared_for_annotation(made)
    client.force_login(ann1)  # the annotator is served nothing of bob's
    client.post("/annotation/next/")  # claiming is a POST (item 17)
    assert not AnnotationItem.objects.filter(claimed_by=ann1).exists()
    out = io.StringIO()
    call_command("enqueue_annotations", "--all", stdout=out)  # nor does staff's "every shared run"
    assert not AnnotationItem.objects.exists()


def test_pasted_code_against_a_public_problem_is_queued_when_its_author_shares_it(
    client, bob, problem, monkeypatch
):
    made = _pasted_against(client, bob, problem, monkeypatch, annotate="on")
    assert made.settings["annotate"] is True and shared_for_annotation(made)
    assert AnnotationItem.objects.filter(run=made).exists()


def test_the_models_own_runs_on_a_public_problem_are_still_shared(alice, problem):
    made = Run.objects.create(problem=problem, user=alice, settings={"k": 1, "turns": 0, "seed": 7})
    assert shared_for_annotation(made)


def test_naming_a_run_to_enqueue_by_hand_opts_it_in(bob, problem):
    """Staff's ``enqueue_annotations RUN_ID`` shares the run on purpose: it says so in the run, so that
    the withdrawal below never takes such items back."""
    made = Run.objects.create(
        problem=problem, user=bob, status=Run.FINISHED, code=OWN, settings={"k": 1, "turns": 0}
    )
    call_command("enqueue_annotations", str(made.id), stdout=io.StringIO())
    made.refresh_from_db()
    assert made.settings["annotate"] is True and shared_for_annotation(made)


def _leaked(run: Run) -> list[AnnotationItem]:
    """What the bug did: ``run`` (not shared) put in the queue, as the run_ended receiver did."""
    from webapp.annotation.enqueue import enqueue_run

    assert enqueue_run(run).created > 0
    return list(AnnotationItem.objects.filter(run=run))


def test_items_queued_before_the_fix_are_withdrawn_and_annotators_cannot_open_them(
    client, bob, ann1, problem, monkeypatch
):
    from webapp.annotation.withdraw import withdraw_unshared

    pasted = _pasted_against(client, bob, problem, monkeypatch)
    leaked = _leaked(pasted)
    assert withdraw_unshared(apps) == len(leaked)
    assert not AnnotationItem.objects.exists()
    client.force_login(ann1)
    assert client.get(f"/annotation/items/{leaked[0].pk}/").status_code == 404
    client.post("/annotation/next/")  # claiming is a POST (item 17)
    assert not AnnotationItem.objects.filter(claimed_by=ann1).exists()
    client.logout()
    assert client.get(f"/annotation/items/{leaked[0].pk}/").status_code == 302  # a visitor: log in


def test_a_withdrawn_item_hands_its_place_to_a_shared_runs_duplicate(
    client, alice, bob, ann1, problem, monkeypatch
):
    """alice shared her paste of the same program: her items, duplicates of bob's leaked ones, take
    their place with ann1's annotation (the same task), and bob's run leaves the queue."""
    from webapp.annotation.models import Annotation
    from webapp.annotation.withdraw import withdraw_unshared

    leaked = _leaked(_pasted_against(client, bob, problem, monkeypatch))
    Annotation.objects.create(item=leaked[0], annotator=ann1, decision="accept", text=leaked[0].text)
    shared = _pasted_against(client, alice, problem, monkeypatch, annotate="on")
    assert set(AnnotationItem.objects.filter(run=shared).values_list("duplicate_of", flat=True)) == {
        item.pk for item in leaked
    }

    assert withdraw_unshared(apps) == len(leaked)
    assert not AnnotationItem.objects.filter(run__user=bob).exists()
    heirs = AnnotationItem.objects.filter(run=shared)
    assert len(heirs) == len(leaked) and all(item.duplicate_of_id is None for item in heirs)
    assert {item.status for item in heirs} == {AnnotationItem.OPEN}
    moved = Annotation.objects.get(annotator=ann1)
    assert moved.item.run == shared and moved.item.text == leaked[0].text
