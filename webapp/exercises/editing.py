"""Making and changing an exercise: who may make one of a trace, and what the edit form does (keep,
drop, reorder and add questions; the title; the narration hidden until a question is answered; the
model as a classmate)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simulator.exercises import KINDS, question_at
from webapp.exercises.models import MAX_QUESTIONS, Exercise
from webapp.explorer.models import Trace
from webapp.params import BadNumber, bounded_int
from webapp.runs import privacy
from webapp.text import storable


def refusal(trace: Trace, user: Any) -> str | None:
    """Why ``user`` may not make an exercise of ``trace`` (None when they may): a trace of a problem's
    private test is its owner's (and staff's) to use; a trace with no step has nothing to ask."""
    run = trace.run
    if run is not None and trace.test is not None and not privacy.may_see_test(run, user, trace.test):
        return (
            "This trace runs a private test of its problem: only the problem's owner (and staff) "
            "can make an exercise of it."
        )
    if not trace.step_count:
        return "This trace has no step to ask about: nothing of the program ran."
    return None


@dataclass
class Outcome:
    errors: list[str] = field(default_factory=list)
    ask_model: bool = False


def apply(exercise: Exercise, post: Any) -> Outcome:
    """Apply the edit form's POST to ``exercise`` and save it; ``errors`` in the educator's words."""
    outcome = Outcome()
    title = " ".join(storable(post.get("title", "")).split())[:200]
    if title:
        exercise.title = title
    else:
        outcome.errors.append("An exercise needs a title.")
    before = [q["id"] for q in exercise.questions]
    kept = []
    for index, question in enumerate(exercise.questions):
        if f"keep-{question['id']}" not in post:
            continue
        try:
            order = bounded_int(post.get(f"order-{question['id']}"), low=1, high=1000, default=index + 1)
        except BadNumber as exc:
            outcome.errors.append(f"Question {index + 1}: {exc}.")
            order = index + 1
        kept.append((order, index, question))
    questions = [q for _, _, q in sorted(kept, key=lambda item: (item[0], item[1]))]
    if "add" in post:
        added = _added(exercise, post, questions, outcome.errors)
        if added is not None:
            questions.append(added)
    exercise.questions = questions
    exercise.hide_narration = "hide_narration" in post
    with_model = "with_model" in post
    changed = {q["id"] for q in questions} != set(before)  # the model answers per question: order aside
    outcome.ask_model = (
        with_model
        and bool(questions)
        and (changed or not exercise.with_model or exercise.classmate.state in ("", "unavailable"))
    )
    if not with_model:
        exercise.model_state, exercise.model_message, exercise.model_answers = "", "", {}
    exercise.with_model = with_model
    exercise.save()
    return outcome


def _added(
    exercise: Exercise, post: Any, questions: list[dict[str, Any]], errors: list[str]
) -> dict[str, Any] | None:
    """The question the add row asks for, or None with the reason in ``errors``."""
    if len(questions) >= MAX_QUESTIONS:
        errors.append(f"An exercise holds at most {MAX_QUESTIONS} questions.")
        return None
    kind = post.get("add_kind", "")
    if kind not in KINDS:
        errors.append("Choose what the new question asks.")
        return None
    trace = exercise.trace
    try:
        step = bounded_int(
            post.get("add_step"), low=1, high=max(trace.step_count, 1), default=1, name="the step"
        )
    except BadNumber as exc:
        errors.append(f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
        return None
    variable = " ".join(str(post.get("add_variable", "")).split())[:100]
    try:
        question = question_at(trace.core_trace(), trace.program(), kind, (step or 1) - 1, variable)
    except ValueError as exc:
        errors.append(f"Cannot ask that at step {step}: {exc}")
        return None
    if any(q["id"] == question.id for q in questions):
        errors.append("That question is in the exercise already.")
        return None
    return question.to_dict()
