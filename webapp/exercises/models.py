"""An exercise made from a saved trace, the students who open it, and their answers.

An exercise keeps its questions as data (``simulator.exercises.ExerciseQuestion.to_dict``), in the
order the educator chose. A student is a display name behind an unguessable token (a cookie: no
account needed); each student answers each question once, and that first answer is the one counted.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from simulator.exercises import ExerciseQuestion
from webapp.accounts.roles import is_staff

MAX_QUESTIONS = 20
MAX_NAME = 60
# The model answers an exercise in under a minute; an ask older than this lost its worker (killed, or
# a restart) and is over: the exercise says so and its next save asks again.
ASK_TIMEOUT = timedelta(minutes=10)
# Why the model has no answers, as students and the educator read it (no server address: the exercise
# link is public, as a run's share link is).
NO_ANSWER = "the model server did not answer"
GAVE_UP = "it did not answer in time: save the exercise to ask it again"


@dataclass(frozen=True)
class Classmate:
    """The model as a classmate, as the pages show it: asking, answered, or not available and why."""

    state: str  # "", "asking", "answered" or "unavailable"
    message: str = ""


def _slug() -> str:
    return secrets.token_urlsafe(12)  # 96 bits: the link cannot be guessed


class Exercise(models.Model):
    MODEL_STATES = [
        ("", "not asked"),
        ("asking", "asking the model"),
        ("answered", "answered"),
        ("unavailable", "not available"),
    ]

    slug = models.CharField(max_length=40, unique=True, default=_slug, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="exercises")
    trace = models.ForeignKey("explorer.Trace", on_delete=models.CASCADE, related_name="exercises")
    title = models.CharField(max_length=200)
    questions = models.JSONField(default=list)  # ExerciseQuestion.to_dict(), in the educator's order
    hide_narration = models.BooleanField(default=True)
    with_model = models.BooleanField(default=False)
    model_state = models.CharField(max_length=12, choices=MODEL_STATES, default="", blank=True)
    model_message = models.TextField(blank=True)  # why the model is not available
    model_answers = models.JSONField(default=dict, blank=True)  # question id -> {given, status, message}
    model_asked_at = models.DateTimeField(null=True, blank=True)  # the ask under way: a newer one wins
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title

    def question_list(self) -> list[ExerciseQuestion]:
        return [ExerciseQuestion.from_dict(q) for q in self.questions]

    def question(self, question_id: str) -> ExerciseQuestion | None:
        return next((q for q in self.question_list() if q.id == question_id), None)

    @property
    def lines(self) -> int:
        """How many lines the program has: the range of a next-line answer."""
        return self.trace.code.count("\n") + 1

    def managed_by(self, user: Any) -> bool:
        """Its owner and staff see the class's results and change the exercise; nobody else."""
        return bool(user.is_authenticated and (user.pk == self.owner_id or is_staff(user)))

    @classmethod
    def managed(cls, slug: str, user: Any) -> Exercise | None:
        """The exercise ``slug`` when ``user`` manages it (its results are theirs alone), else None."""
        exercise = cls.objects.select_related("trace").filter(slug=slug).first()
        return exercise if exercise is not None and user is not None and exercise.managed_by(user) else None

    @property
    def classmate(self) -> Classmate:
        """The model's state, an ask that outlived ``ASK_TIMEOUT`` counted as over."""
        if self.model_state == "asking" and (
            self.model_asked_at is None or timezone.now() - self.model_asked_at > ASK_TIMEOUT
        ):
            return Classmate("unavailable", GAVE_UP)
        if self.model_state == "unavailable":
            return Classmate("unavailable", self.model_message or NO_ANSWER)
        return Classmate(self.model_state)

    def model_answer(self, question_id: str) -> dict[str, Any]:
        """The model's answer to one question, as a student reads it beside their own."""
        classmate = self.classmate
        if classmate.state == "answered":
            found = (self.model_answers or {}).get(question_id)
            return {"state": "answered", **found} if found else {"state": "unavailable", "message": NO_ANSWER}
        if classmate.state == "asking":
            return {"state": "asking", "message": "the model is still answering"}
        return {"state": "unavailable", "message": classmate.message}

    @property
    def group(self) -> str:
        """The Channels group of its results page's sockets."""
        return f"exercise_{self.pk}"


class Student(models.Model):
    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="students")
    token = models.CharField(max_length=40, unique=True, default=_slug, editable=False)
    name = models.CharField(max_length=MAX_NAME)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.name


class Answer(models.Model):
    STATUSES = [("right", "right"), ("wrong", "wrong")]

    exercise = models.ForeignKey(Exercise, on_delete=models.CASCADE, related_name="answers")
    student = models.ForeignKey(Student, on_delete=models.CASCADE, related_name="answers")
    question_id = models.CharField(max_length=200)
    text = models.TextField()  # as typed (simulator.exercises.check refuses more than MAX_TEXT)
    given = models.TextField()  # normalised: the same answer typed two ways is one misconception
    status = models.CharField(max_length=8, choices=STATUSES)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["student", "question_id"], name="one_answer_per_question")
        ]
