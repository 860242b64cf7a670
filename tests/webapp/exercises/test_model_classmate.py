"""The model as a classmate: asked once when the exercise is saved with it, its answers checked like a
student's and shown beside theirs; a model server that is down leaves the exercise working and saying
so. Against the fake OpenAI-compatible server (a test double of vLLM) on a real socket."""

from __future__ import annotations

import json
import socket
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from simulator.llm.testing import FakeModelServer
from tests.webapp.exercises.support import answer, exercise_of, join
from webapp.exercises.models import Classmate, Exercise
from webapp.exercises.tasks import NO_QUEUE, ask_model, ask_model_task, start_asking

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


def _ask_served(exercise: Exercise, right: bool, monkeypatch: Any) -> FakeModelServer:
    """Ask the model about ``exercise`` against the fake server answering right (or wrong); the server."""
    server = FakeModelServer(lambda body: _reply(exercise, right), model="fake-model")
    with server.serve() as url:
        monkeypatch.setenv("EXECSIM_MODEL_URL", url)
        monkeypatch.setenv("EXECSIM_MODEL_NAME", "fake-model")
        ask_model(exercise.pk)
    return server


@pytest.mark.parametrize("right", [True, False])
def test_the_models_answers_are_checked_and_shown_beside_the_students(educator, monkeypatch, right):
    exercise = exercise_of(educator, with_model=True)
    server = _ask_served(exercise, right, monkeypatch)
    exercise.refresh_from_db()
    assert exercise.model_state == "answered"
    prompt = server.requests[0]["messages"][0]["content"]
    assert "assert total([1, 2, 3]) == ????" in prompt and server.requests[0]["temperature"] == 0.0
    statuses = {qid: a["status"] for qid, a in exercise.model_answers.items()}
    assert statuses["result"] == "right"
    others = [s for qid, s in statuses.items() if qid != "result"]
    assert others and set(others) == {"right" if right else "wrong"}

    student = Client()
    reply = answer(student, exercise, join(student, exercise), "result", "14").json()
    assert reply["model"] == {"state": "answered", "given": "14", "status": "right", "message": "Right."}
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
    reply: dict[str, Any] = answer(client, exercise, join(client, exercise), "result", "14").json()
    assert reply["status"] == "right"
    assert reply["model"] == {"state": "unavailable", "message": "the model server did not answer"}
    assert str(port) not in json.dumps(reply)  # the public link shows no server address


def test_a_script_is_not_asked(educator):
    from tests.webapp.exercises.support import traced

    trace = traced(educator, "n = int(input())\nfor i in range(n):\n    print(i)\n", "")
    trace.mode, trace.call_input = "stdin", "2\n"
    trace.save()
    exercise = exercise_of(educator, trace=trace, with_model=True)
    ask_model(exercise.pk)
    exercise.refresh_from_db()
    assert exercise.model_state == "unavailable" and "script" in exercise.model_message


def test_an_ask_whose_worker_died_is_over_and_the_next_save_asks_again(educator, monkeypatch):
    from webapp.exercises.models import ASK_TIMEOUT, GAVE_UP

    exercise = exercise_of(educator, with_model=True, model_state="asking")
    Exercise.objects.filter(pk=exercise.pk).update(model_asked_at=timezone.now() - ASK_TIMEOUT / 2)
    exercise.refresh_from_db()
    assert exercise.classmate.state == "asking"
    Exercise.objects.filter(pk=exercise.pk).update(model_asked_at=timezone.now() - ASK_TIMEOUT * 2)
    exercise.refresh_from_db()
    assert exercise.classmate == Classmate("unavailable", GAVE_UP)
    client = Client()
    reply = answer(client, exercise, join(client, exercise), "result", "14").json()
    assert reply["model"] == {"state": "unavailable", "message": GAVE_UP}

    asked: list[Any] = []
    monkeypatch.setattr("webapp.exercises.views.start_asking", asked.append)
    form = {"title": exercise.title, "with_model": "on"}
    form.update({f"keep-{q['id']}": "on" for q in exercise.questions})
    teacher = Client()
    teacher.force_login(educator)
    teacher.post(reverse("exercises:edit", args=[exercise.slug]), form)
    assert [e.pk for e in asked] == [exercise.pk]  # the same questions, asked again


def test_a_queue_that_is_down_says_so_at_once(educator, settings, monkeypatch):
    from kombu.exceptions import OperationalError

    def broker_down_double(*args: Any) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6399. Connection refused.")

    settings.TASK_RUNNER = "celery"
    monkeypatch.setattr(ask_model_task, "delay", broker_down_double)
    exercise = exercise_of(educator, with_model=True)
    start_asking(exercise)
    exercise.refresh_from_db()
    assert exercise.classmate == Classmate("unavailable", NO_QUEUE)


def test_an_older_ask_does_not_overwrite_a_newer_one(educator, monkeypatch):
    """The educator saves new questions while the model answers the old ones: the old answers are
    dropped when they arrive, and the new ask's state stands."""
    from webapp.exercises import tasks

    exercise = exercise_of(educator, with_model=True)
    older = timezone.now()
    Exercise.objects.filter(pk=exercise.pk).update(model_state="asking", model_asked_at=older)
    read = tasks.read_model_reply

    def read_after_a_new_save(*args: Any) -> Any:  # the save lands while the reply is read
        Exercise.objects.filter(pk=exercise.pk).update(model_asked_at=older + timedelta(seconds=1))
        return read(*args)

    monkeypatch.setattr(tasks, "read_model_reply", read_after_a_new_save)
    server = _ask_served(exercise, True, monkeypatch)
    exercise.refresh_from_db()
    assert server.requests and (exercise.model_state, exercise.model_answers) == ("asking", {})
