"""The model as a classmate: when an exercise is saved with it, the served model answers every
question once, with the white-box prompt, in the background (a Celery worker, or the owner's queue of
embedded mode's threads). Its answers are checked like a student's and stored on the exercise; when the
model is down the exercise says so and works without it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import datetime

from django.utils import timezone

from simulator.exercise_model import model_prompt, read_model_reply
from simulator.llm.errors import LLMError
from webapp import broadcast
from webapp.celery import app
from webapp.exercises.models import NO_ANSWER, Exercise
from webapp.runs import runner
from webapp.runs.pipeline import make_client

log = logging.getLogger(__name__)

MAX_TOKENS = 768  # the reasoning and one answer line per question
NOT_A_CALL = "it answers questions about a function call only, and this program is a script"
NO_QUEUE = "the background workers could not be reached"


def start_asking(exercise: Exercise) -> None:
    """Ask the model about ``exercise`` in the background (its state is "asking" until it ends)."""
    asked_at = timezone.now()
    Exercise.objects.filter(pk=exercise.pk).update(
        model_state="asking", model_message="", model_answers={}, model_asked_at=asked_at
    )
    try:
        runner.in_background(exercise.owner_id, ask_model_task, ask_model, exercise.pk)
    except Exception:  # the broker is down: say so now, not "asking" until the ask times out
        log.warning("could not queue the model's answers to exercise %s", exercise.pk, exc_info=True)
        _store(exercise, asked_at, "unavailable", NO_QUEUE, {})


@app.task(name="webapp.exercises.ask_model", ignore_result=True)
def ask_model_task(exercise_id: int) -> None:
    ask_model(exercise_id)


def ask_model(exercise_id: int) -> None:
    exercise = Exercise.objects.select_related("trace").filter(pk=exercise_id).first()
    if exercise is None:
        return
    asked_at = exercise.model_asked_at
    program = exercise.trace.program()
    questions = exercise.question_list()
    prompt = model_prompt(program, questions)
    if prompt is None:
        _store(exercise, asked_at, "unavailable", NOT_A_CALL, {})
        return
    try:
        reply = asyncio.run(_ask(prompt))
    except LLMError as exc:
        log.warning("the model did not answer exercise %s: %s", exercise_id, exc)
        _store(exercise, asked_at, "unavailable", NO_ANSWER, {})
        return
    except Exception:  # a crash here must not leave the exercise "asking" for ever
        log.exception("asking the model about exercise %s failed", exercise_id)
        _store(exercise, asked_at, "unavailable", NO_ANSWER, {})
        return
    checked = read_model_reply(program, questions, reply)
    answers = {
        q.id: {"given": c.given, "status": c.status, "message": c.message}
        for q, c in zip(questions, checked, strict=True)
    }
    _store(exercise, asked_at, "answered", "", answers)


async def _ask(prompt: str) -> str:
    async with make_client() as client:
        result = await client.chat(
            [{"role": "user", "content": prompt}], temperature=0.0, top_p=1.0, max_tokens=MAX_TOKENS
        )
    return result.choices[0].text if result.choices else ""


def _store(
    exercise: Exercise, asked_at: datetime | None, state: str, message: str, answers: Mapping[str, object]
) -> None:
    """Keep the model's answers, unless a newer ask began since (the educator changed the questions
    while it answered): the newer ask's answers are the ones that count."""
    stored = Exercise.objects.filter(pk=exercise.pk, model_asked_at=asked_at).update(
        model_state=state, model_message=message, model_answers=answers
    )
    if stored:
        changed(exercise)


def changed(exercise: Exercise) -> None:
    """Tell the exercise's open results pages that something changed (never fails the caller)."""
    try:
        broadcast.group_send(exercise.group, {"type": "exercise.changed"})
    except Exception:  # a channel layer that is down: the page catches up when it reconnects
        log.warning("could not notify the results page of exercise %s", exercise.pk, exc_info=True)
