"""The pages a class, a lab and a lecture load most (bench/load.py) make a number of database queries
that does not grow with what they show: a run's page and its share link (k=2 and k=4 candidates),
the shared trace, an exercise's answer, the annotation queue."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

# The task records a run from threads of its own: they see only committed rows.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sandbox")]


def _queries(client: Client, url: str, **post) -> int:
    with CaptureQueriesContext(connection) as captured:
        if post:
            response = client.post(url, json.dumps(post), content_type="application/json")
        else:
            response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return len(captured)


def _finished(make_run, k: int):
    from webapp.runs.models import Run
    from webapp.runs.tasks import execute_run

    run = make_run(settings={"k": k, "turns": 0, "seed": 7})
    assert execute_run(str(run.id)) == Run.FINISHED
    run.refresh_from_db()
    return run


def test_a_runs_page_and_share_link_make_as_many_queries_for_k_4_as_for_k_2(make_run, alice):
    owner = Client()
    owner.force_login(alice)
    counts = {}
    for k in (2, 4):
        run = _finished(make_run, k)
        counts[k] = (
            _queries(owner, reverse("runs:detail", args=[run.id])),
            _queries(Client(), reverse("runs:share", args=[run.share_token])),
        )
    assert counts[2] == counts[4], counts
    assert max(counts[4]) <= 30, counts


def test_a_class_pages_make_few_queries(django_user_model):
    from tests.webapp.exercises.support import exercise_of, join
    from tests.webapp.explorer.support import _user

    educator, ann1 = (
        _user(django_user_model, "edna", "educator"),
        _user(django_user_model, "ann1", "annotator"),
    )

    exercise = exercise_of(educator)
    student = Client()
    token = join(student, exercise)
    shared_trace = _queries(Client(), reverse("explorer:view", args=[exercise.trace.slug]))
    play = _queries(student, reverse("exercises:play", args=[exercise.slug]))
    answer = _queries(
        student, reverse("exercises:answer", args=[exercise.slug]), token=token, question="result", text="14"
    )
    annotator = Client()
    annotator.force_login(ann1)
    queue = _queries(annotator, reverse("annotation:queue"))
    assert shared_trace <= 5 and play <= 8 and answer <= 10 and queue <= 25, (
        shared_trace,
        play,
        answer,
        queue,
    )
