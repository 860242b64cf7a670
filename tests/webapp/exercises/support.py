"""Exercises made through the ORM for the view tests: a traced program with a loop and a function
call, saved as the explorer saves it, and the exercise ExecSim proposes from it; a student's join and
answer through the test client."""

from __future__ import annotations

import json
from typing import Any

LOOP_AND_CALL = (
    "def square(x):\n    return x * x\n\n\n"
    "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + square(x)\n    return s\n"
)
CALL = "total([1, 2, 3])"


def traced(owner: Any, code: str = LOOP_AND_CALL, call: str = CALL, **fields: Any) -> Any:
    from simulator.execution import Program
    from webapp.explorer.views import _save

    return _save(owner, Program(code=code, call=call), title=fields.pop("title", call), **fields)


def exercise_of(owner: Any, trace: Any = None, **fields: Any) -> Any:
    from simulator.exercises import propose
    from webapp.exercises.models import Exercise

    trace = trace or traced(owner)
    questions = [q.to_dict() for q in propose(trace.core_trace(), trace.program())]
    return Exercise.objects.create(owner=owner, trace=trace, title="Loops", questions=questions, **fields)


def post_json(client: Any, url: str, body: dict[str, Any]) -> Any:
    return client.post(url, json.dumps(body), content_type="application/json")


def join(client: Any, exercise: Any, name: str = "Ada") -> str:
    """A student joins under ``name``; their token."""
    from django.urls import reverse

    response = post_json(client, reverse("exercises:join", args=[exercise.slug]), {"name": name})
    assert response.status_code == 200, response.content
    return str(response.json()["token"])


def answer(client: Any, exercise: Any, token: str, question: str, text: str) -> Any:
    """The response to a student's answer ``text`` to the question ``question``."""
    from django.urls import reverse

    url = reverse("exercises:answer", args=[exercise.slug])
    return post_json(client, url, {"token": token, "question": question, "text": text})
