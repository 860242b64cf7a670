"""What the class did: per question, how many answered, the share right and the most common wrong
answers (the misconceptions); per student, their score; the model's answers beside the class's. One
summary for the results page, its live fragment and the CSV export."""

from __future__ import annotations

import csv
import io
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.template.loader import render_to_string

from simulator.exercises import ExerciseQuestion
from webapp.exercises.models import Answer, Exercise

COMMON_WRONG = 3  # wrong answers listed per question
_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet would run a cell that starts so


@dataclass
class QuestionResult:
    number: int
    id: str
    prompt: str
    answer: str
    answered: int = 0
    right: int = 0
    wrong: list[tuple[str, int]] = field(default_factory=list)  # (answer, how many), most common first
    model: dict[str, Any] | None = None  # the model's {given, status, message}, when it answered

    @property
    def share(self) -> int | None:
        """Percent right of those who answered (None before anyone did)."""
        return round(100 * self.right / self.answered) if self.answered else None


@dataclass
class StudentResult:
    name: str
    answered: int
    right: int


@dataclass
class ClassResults:
    questions: list[QuestionResult]
    students: list[StudentResult]
    model_right: int
    model_answered: int
    model_unreadable: int = 0  # answers of the model that could not be read (no <answer> block, ...)

    @property
    def answers(self) -> int:
        return sum(q.answered for q in self.questions)


def shown(question: ExerciseQuestion, given: str) -> str:
    """An answer as a person reads it: a next-line answer is "line 4", not "4"."""
    return f"line {given}" if question.kind == "next_line" else given


def _model(question: ExerciseQuestion, answer: dict[str, Any] | None) -> dict[str, Any] | None:
    if not answer:
        return None
    return {**answer, "given": shown(question, answer["given"]) if answer.get("given") else ""}


def class_results(exercise: Exercise) -> ClassResults:
    rows = list(
        Answer.objects.filter(exercise=exercise).values("question_id", "given", "status", "student_id")
    )
    per_question: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        per_question[row["question_id"]].append(row)
    questions = []
    for number, question in enumerate(exercise.question_list(), 1):
        answers = per_question.get(question.id, [])
        wrong = Counter(a["given"] for a in answers if a["status"] != "right")
        questions.append(
            QuestionResult(
                number=number,
                id=question.id,
                prompt=question.prompt(),
                answer=shown(question, question.answer),
                answered=len(answers),
                right=sum(a["status"] == "right" for a in answers),
                wrong=[(shown(question, given), n) for given, n in wrong.most_common(COMMON_WRONG)],
                model=_model(question, (exercise.model_answers or {}).get(question.id)),
            )
        )
    asked = {q.id for q in questions}
    scores: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        if row["question_id"] in asked:
            scores[row["student_id"]][0] += 1
            scores[row["student_id"]][1] += row["status"] == "right"
    students = [
        StudentResult(s.name, *scores.get(s.pk, [0, 0])) for s in exercise.students.order_by("name", "id")
    ]
    model = [q.model for q in questions if q.model]
    return ClassResults(
        questions=questions,
        students=students,
        model_right=sum(m.get("status") == "right" for m in model),
        model_answered=len(model),
        model_unreadable=sum(m.get("status") == "unreadable" for m in model),
    )


def _cell(value: Any) -> str:
    text = str(value)
    return "'" + text if text.startswith(_FORMULA) else text


def results_csv(exercise: Exercise) -> str:
    """One row per student and question: who, which, what they answered, right or wrong."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student", "question", "prompt", "answer", "right", "expected", "answered_at"])
    numbers = {q.id: (i, q) for i, q in enumerate(exercise.question_list(), 1)}
    answers = (
        Answer.objects.filter(exercise=exercise).select_related("student").order_by("student__name", "id")
    )
    for answer in answers:
        if answer.question_id not in numbers:
            continue  # a question the educator dropped since
        number, question = numbers[answer.question_id]
        writer.writerow(
            [
                _cell(answer.student.name),
                number,
                _cell(question.prompt()),
                _cell(answer.text),
                "yes" if answer.status == "right" else "no",
                _cell(question.answer),
                answer.created_at.isoformat(timespec="seconds"),
            ]
        )
    return out.getvalue()


def results_fragment(exercise: Exercise, *, oob: bool = False) -> str:
    """The live part of the results page; its socket sends it again on every change (``oob``: as an
    out-of-band swap, which is how htmx's WebSocket extension places a message)."""
    context = {"exercise": exercise, "results": class_results(exercise), "oob": oob}
    return render_to_string("exercises/_results.html", context)
