"""The model as a classmate: asked once when the exercise is saved with it, its answers checked like a
student's and shown beside theirs; a model server that is down leaves the exercise working and saying
so. Against the fake OpenAI-compatible server (a test double of vLLM) on a real socket."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from simulator.llm.testing import FakeModelServer
from tests.webapp.exercises.support import exercise_of
from webapp.exercises.models import Exercise
from webapp.exercises.tasks import ask_model

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sandbox")]


def _reply(exercise: Exercise, right: bool) -> str:
    """A white-box reply answering every question right, or every one but the result wrong."""
    code = exercise.trace.code.split("\n")
    lines = []
    for q in exercise.question_list():
        if q.kind == "next_line":
            lines.append(code[int(q.answer) - 1].strip() if right else "s = 0")
        elif q.kind == "value":
            lines.append(f"{q.answer}; int" if right else "99; int")
    answer = "\n".join(["assert total([1, 2, 3]) == 14", *lines])
    return f"<reasoning>s adds the squares</reasoning>\n<answer>\n{answer}\n</answer>"


@pytest.mark.parametrize("right", [True, False])
def test_the_models_answers_are_checked_and_shown_beside_the_students(educator, monkeypatch, right):
    exercise = exercise_of(educator, with_model=True)
    server = FakeModelServer(lambda body: _reply(exercise, right), model="fake-model")
    with server.serve() as url:
        monkeypatch.setenv("EXECSIM_MODEL_URL", url)
        monkeypatch.setenv("EXECSIM_MODEL_NAME", "fake-model")
        ask_model(exercise.pk)
    exercise.refresh_from_db()
    assert exercise.model_state == "answered"
    prompt = server.requests[0]["messages"][0]["content"]
    assert "assert total([1, 2, 3]) == ????" in prompt and server.requests[0]["temperature"] == 0.0
    statuses = {qid: a["status"] for qid, a in exercise.model_answers.items()}
    assert statuses["result"] == "right"
    others = [s for qid, s in statuses.items() if qid != "result"]
    assert others and set(others) == {"right" if right else "wrong"}

    student = Client()
    token = student.post(
        reverse("exercises:join", args=[exercise.slug]),
        json.dumps({"name": "Ada"}),
        content_type="application/json",
    ).json()["token"]
    answer = student.post(
        reverse("exercises:answer", args=[exercise.slug]),
        json.dumps({"token": token, "question": "result", "text": "14"}),
        content_type="application/json",
    ).json()
    assert answer["model"] == {"state": "answered", "given": "14", "status": "right", "message": "Right."}
    results = Client()
    results.force_login(educator)
    page = results.get(reverse("exercises:results", args=[exercise.slug]))
    assert page.context["results"].model_right == (len(statuses) if right else 1)


def test_a_model_server_that_is_down_leaves_the_exercise_working_and_saying_so(educator, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("EXECSIM_MODEL_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("EXECSIM_MODEL_WAIT_S", "5")
    exercise = exercise_of(educator, with_model=True)
    ask_model(exercise.pk)
    exercise.refresh_from_db()
    assert (exercise.model_state, exercise.model_message) == (
        "unavailable",
        "the model server did not answer",
    )
    client = Client()
    token = client.post(
        reverse("exercises:join", args=[exercise.slug]),
        json.dumps({"name": "Ada"}),
        content_type="application/json",
    ).json()["token"]
    answer: dict[str, Any] = client.post(
        reverse("exercises:answer", args=[exercise.slug]),
        json.dumps({"token": token, "question": "result", "text": "14"}),
        content_type="application/json",
    ).json()
    assert answer["status"] == "right"
    assert answer["model"] == {"state": "unavailable", "message": "the model server did not answer"}
    assert str(port) not in json.dumps(answer)  # the public link shows no server address


def test_a_script_is_not_asked(educator):
    from tests.webapp.exercises.support import traced

    trace = traced(educator, "n = int(input())\nfor i in range(n):\n    print(i)\n", "")
    trace.mode, trace.call_input = "stdin", "2\n"
    trace.save()
    exercise = exercise_of(educator, trace=trace, with_model=True)
    ask_model(exercise.pk)
    exercise.refresh_from_db()
    assert exercise.model_state == "unavailable" and "script" in exercise.model_message
