"""The model as a classmate: when an exercise is saved with it, the served model answers every
question once, with the white-box prompt, in the background (a Celery worker, or a thread in embedded
mode). Its answers are checked like a student's and stored on the exercise; when the model is down the
exercise says so and works without it."""

from __future__ import annotations

import asyncio
import logging
import threading

from django.conf import settings
from django.db import connections

from simulator.exercises import model_prompt, read_model_reply
from simulator.llm.errors import LLMError
from webapp import broadcast
from webapp.celery import app
from webapp.exercises.models import Exercise
from webapp.runs.pipeline import make_client

log = logging.getLogger(__name__)

MAX_TOKENS = 768  # the reasoning and one answer line per question
# Why the model has no answers, as students and the educator read it (no server address: the exercise
# link is public, as a run's share link is, issue 51).
NOT_A_CALL = "it answers questions about a function call only, and this program is a script"
NO_ANSWER = "the model server did not answer"


def start_asking(exercise: Exercise) -> None:
    """Ask the model about ``exercise`` in the background (its state is "asking" until it ends)."""
    Exercise.objects.filter(pk=exercise.pk).update(model_state="asking", model_message="", model_answers={})
    if settings.TASK_RUNNER == "celery":
        ask_model_task.delay(exercise.pk)
    else:
        threading.Thread(target=_in_thread, args=(exercise.pk,), daemon=True).start()


def _in_thread(exercise_id: int) -> None:
    try:
        ask_model(exercise_id)
    finally:
        connections.close_all()


@app.task(name="webapp.exercises.ask_model", ignore_result=True)
def ask_model_task(exercise_id: int) -> None:
    ask_model(exercise_id)


def ask_model(exercise_id: int) -> None:
    exercise = Exercise.objects.select_related("trace").filter(pk=exercise_id).first()
    if exercise is None:
        return
    program = exercise.trace.program()
    questions = exercise.question_list()
    prompt = model_prompt(program, questions)
    if prompt is None:
        _store(exercise, "unavailable", NOT_A_CALL, {})
        return
    try:
        reply = asyncio.run(_ask(prompt))
    except LLMError as exc:
        log.warning("the model did not answer exercise %s: %s", exercise_id, exc)
        _store(exercise, "unavailable", NO_ANSWER, {})
        return
    except Exception:  # a crash here must not leave the exercise "asking" for ever
        log.exception("asking the model about exercise %s failed", exercise_id)
        _store(exercise, "unavailable", NO_ANSWER, {})
        return
    checked = read_model_reply(program, questions, reply)
    answers = {
        q.id: {"given": c.given, "status": c.status, "message": c.message}
        for q, c in zip(questions, checked, strict=True)
    }
    _store(exercise, "answered", "", answers)


async def _ask(prompt: str) -> str:
    async with make_client() as client:
        result = await client.chat(
            [{"role": "user", "content": prompt}], temperature=0.0, top_p=1.0, max_tokens=MAX_TOKENS
        )
    return result.choices[0].text if result.choices else ""


def _store(exercise: Exercise, state: str, message: str, answers: dict[str, object]) -> None:
    Exercise.objects.filter(pk=exercise.pk).update(
        model_state=state, model_message=message, model_answers=answers
    )
    changed(exercise)


def changed(exercise: Exercise) -> None:
    """Tell the exercise's open results pages that something changed (never fails the caller)."""
    try:
        broadcast.group_send(exercise.group, {"type": "exercise.changed"})
    except Exception:  # a channel layer that is down: the page catches up when it reconnects
        log.warning("could not notify the results page of exercise %s", exercise.pk, exc_info=True)
