"""An exercise made from a saved trace, the students who open it, and their answers.

An exercise keeps its questions as data (``simulator.exercises.ExerciseQuestion.to_dict``), in the
order the educator chose. A student is a display name behind an unguessable token (a cookie: no
account needed); each student answers each question once, and that first answer is the one counted.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models

from simulator.exercises import ExerciseQuestion
from webapp.accounts.roles import is_staff

MAX_QUESTIONS = 20
MAX_NAME = 60
MAX_ANSWER = 2000  # what is kept of a typed answer (the check caps it the same way)


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
    question_id = models.CharField(max_length=80)
    text = models.TextField()  # as typed (capped at MAX_ANSWER)
    given = models.TextField()  # normalised: the same answer typed two ways is one misconception
    status = models.CharField(max_length=8, choices=STATUSES)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["student", "question_id"], name="one_answer_per_question")
        ]
