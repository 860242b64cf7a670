"""Exercise pages: make one from a trace, edit its questions, the student's stepper (no account: a
display name), the answer check, and the class's results (live, and as CSV) for its owner and staff.

The student's requests (join, answer) carry the student's token in their body, not only in a cookie:
they work inside another site's frame, where the browser may withhold cookies, and a page elsewhere
cannot answer for a student it does not hold the token of, so they need no CSRF cookie."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.db import IntegrityError
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from simulator.exercises import check, propose
from webapp.accounts.roles import role_required
from webapp.exercises import editing
from webapp.exercises.models import MAX_NAME, Answer, Exercise, Student
from webapp.exercises.results import class_results, results_csv
from webapp.exercises.tasks import changed, start_asking
from webapp.explorer.context import viewer_context
from webapp.explorer.models import Trace
from webapp.limits import LimitExceeded, check_can_answer, check_can_join
from webapp.text import storable

COOKIE_DAYS = 180


def _managed(request: HttpRequest, slug: str) -> Exercise:
    """The exercise, for its owner and staff; a 404 for anyone else (its results are theirs alone)."""
    exercise = Exercise.managed(slug, request.user)
    if exercise is None:
        raise Http404("No such exercise")
    return exercise


@role_required("educator")
def exercise_list(request: HttpRequest) -> HttpResponse:
    mine = Exercise.objects.filter(owner=request.user).annotate(student_count=Count("students"))[:100]
    return render(request, "exercises/list.html", {"exercises": mine})


@role_required("educator")
@require_POST
def exercise_new(request: HttpRequest, slug: str) -> HttpResponse:
    """An exercise from the trace ``slug``, with the questions ExecSim proposes; then its edit page."""
    trace = get_object_or_404(Trace, slug=slug)
    refusal = editing.refusal(trace, request.user)
    if refusal:
        messages.error(request, refusal)
        return redirect("explorer:view", slug=trace.slug)
    questions = propose(trace.core_trace(), trace.program())
    exercise = Exercise.objects.create(
        owner=request.user,
        trace=trace,
        title=f"Predict: {trace}"[:200],
        questions=[q.to_dict() for q in questions],
    )
    messages.success(
        request,
        f"ExecSim proposed {len(questions)} question{'s' if len(questions) != 1 else ''} from the trace: "
        "keep, drop, reorder or add, then save.",
    )
    return redirect("exercises:edit", slug=exercise.slug)


@role_required("educator")
def exercise_edit(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = _managed(request, slug)
    trace = exercise.trace
    if request.method == "POST":
        outcome = editing.apply(exercise, request.POST)
        for error in outcome.errors:
            messages.error(request, error)
        if outcome.ask_model:
            start_asking(exercise)
        changed(exercise)  # saved, errors or not: the results page follows
        if not outcome.errors and "add" not in request.POST:
            messages.success(request, "Saved. Share the link with your class.")
            return redirect("exercises:results", slug=exercise.slug)
        return redirect("exercises:edit", slug=exercise.slug)
    context = {
        "exercise": exercise,
        "questions": exercise.question_list(),
        "steps": trace.step_count,
        "play_url": request.build_absolute_uri(reverse("exercises:play", args=[exercise.slug])),
        "embed_url": request.build_absolute_uri(reverse("exercises:embed", args=[exercise.slug])),
    }
    return render(request, "exercises/edit.html", context)


# --- the student's side ---------------------------------------------------------------------------


def _cookie(exercise: Exercise) -> str:
    return f"execsim_student_{exercise.slug}"


def _student(request: HttpRequest, exercise: Exercise, token: str | None = None) -> Student | None:
    token = token if token is not None else request.COOKIES.get(_cookie(exercise), "")
    if not token or len(token) > 40:
        return None
    return Student.objects.filter(exercise=exercise, token=token).first()


def _answer_payload(exercise: Exercise, answer: Answer) -> dict[str, Any]:
    """What a student sees once they answered: right or wrong and why, the real answer, the narration
    sentence that explains it, and the model's answer beside theirs when the exercise asks it."""
    question = exercise.question(answer.question_id)
    payload: dict[str, Any] = {
        "question": answer.question_id,
        "status": answer.status,
        "text": answer.text,
        "message": check(question, answer.text, lines=exercise.lines).message if question else "",
        "expected": question.answer if question else "",
        "explanation": question.explanation if question else "",
    }
    if exercise.with_model:
        payload["model"] = exercise.model_answer(answer.question_id)
    return payload


def _answered(exercise: Exercise, student: Student) -> dict[str, dict[str, Any]]:
    """What the student answered so far, per question, as their page shows it."""
    return {a.question_id: _answer_payload(exercise, a) for a in student.answers.all()}


def _play_context(request: HttpRequest, exercise: Exercise, *, embedded: bool) -> dict[str, Any]:
    trace = exercise.trace
    core = trace.core_trace()
    student = _student(request, exercise)
    answered = _answered(exercise, student) if student is not None else {}
    context = viewer_context(core, trace.program())
    context.update(
        {
            "exercise": exercise,
            "saved": trace,
            "embedded": embedded,
            "student": student,
            "permalink": request.build_absolute_uri(reverse("exercises:play", args=[exercise.slug])),
            "exercise_data": {
                "questions": [
                    {
                        "id": q.id,
                        "kind": q.kind,
                        "step": q.step,
                        "reveal": q.reveal,
                        "prompt": q.prompt(),
                        "number": n,
                    }
                    for n, q in enumerate(exercise.question_list(), 1)
                ],
                "answered": answered,
                "hideNarration": exercise.hide_narration,
                "token": student.token if student else "",
                "name": student.name if student else "",
                "join": reverse("exercises:join", args=[exercise.slug]),
                "answer": reverse("exercises:answer", args=[exercise.slug]),
            },
        }
    )
    return context


@require_GET
def exercise_play(request: HttpRequest, slug: str) -> HttpResponse:
    """The exercise's permalink: anyone holding it may work it (a display name, no account)."""
    exercise = get_object_or_404(Exercise.objects.select_related("trace"), slug=slug)
    return render(request, "exercises/play.html", _play_context(request, exercise, embedded=False))


@require_GET
@xframe_options_exempt
def exercise_embed(request: HttpRequest, slug: str) -> HttpResponse:
    """The exercise inside another site's page (the one exercise view other sites may frame)."""
    exercise = get_object_or_404(Exercise.objects.select_related("trace"), slug=slug)
    return render(request, "exercises/embed.html", _play_context(request, exercise, embedded=True))


def _body(request: HttpRequest) -> dict[str, Any]:
    try:
        data = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _refused(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


@csrf_exempt
@require_POST
def exercise_join(request: HttpRequest, slug: str) -> HttpResponse:
    """A student joins with a display name; the answer is their token (also kept in a cookie). With a
    token instead (a student's page kept it: a frame on another site gets no cookie), the student comes
    back: their name and the answers they gave."""
    exercise = get_object_or_404(Exercise.objects.select_related("trace"), slug=slug)
    data = _body(request)
    try:
        check_can_join(request)
    except LimitExceeded as exc:
        return _refused(str(exc), 429)
    if isinstance(data.get("token"), str):
        student = _student(request, exercise, data["token"])
        if student is None:
            return _refused("Type your name to start again.", 403)
        return _with_cookie(
            JsonResponse(
                {"token": student.token, "name": student.name, "answered": _answered(exercise, student)}
            ),
            request,
            exercise,
            student,
        )
    name = data.get("name")
    name = " ".join(storable(name).split()) if isinstance(name, str) else ""
    if not name:
        return _refused("Type the name your teacher will see.", 400)
    if len(name) > MAX_NAME:
        return _refused(f"A name of at most {MAX_NAME} characters, please.", 400)
    student = Student.objects.create(exercise=exercise, name=name)
    changed(exercise)
    response = JsonResponse({"token": student.token, "name": student.name, "answered": {}})
    return _with_cookie(response, request, exercise, student)


def _with_cookie(
    response: HttpResponse, request: HttpRequest, exercise: Exercise, student: Student
) -> HttpResponse:
    response.set_cookie(
        _cookie(exercise),
        student.token,
        max_age=COOKIE_DAYS * 86400,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
    )
    return response


@csrf_exempt
@require_POST
def exercise_answer(request: HttpRequest, slug: str) -> HttpResponse:
    """Check a student's answer against the real trace, once: the first answer to a question counts."""
    exercise = get_object_or_404(Exercise.objects.select_related("trace"), slug=slug)
    data = _body(request)
    token, question_id, text = data.get("token"), data.get("question"), data.get("text")
    if not all(isinstance(value, str) for value in (token, question_id, text)):
        return _refused("An answer needs your token, the question and your text.", 400)
    student = _student(request, exercise, token)
    if student is None:
        return _refused("Join the exercise with your name first (reload the page).", 403)
    question = exercise.question(question_id)
    if question is None:
        return _refused("That question is no longer in the exercise: reload the page.", 404)
    existing = student.answers.filter(question_id=question_id).first()
    if existing is not None:
        return JsonResponse({**_answer_payload(exercise, existing), "again": True})
    try:
        check_can_answer(student.pk)
    except LimitExceeded as exc:
        return _refused(str(exc), 429)
    text = storable(text)
    result = check(question, text, lines=exercise.lines)  # too long: unreadable
    if result.status == "unreadable":
        return JsonResponse({"status": "unreadable", "message": result.message}, status=400)
    try:
        answer = Answer.objects.create(
            exercise=exercise,
            student=student,
            question_id=question_id,
            text=text,
            given=result.given,
            status=result.status,
        )
    except IntegrityError:  # the same answer sent twice at once: the first one counts
        answer = student.answers.get(question_id=question_id)
    changed(exercise)
    return JsonResponse(_answer_payload(exercise, answer))


# --- the class's results --------------------------------------------------------------------------


@role_required("educator")
def exercise_results(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = _managed(request, slug)
    context = {
        "exercise": exercise,
        "results": class_results(exercise),
        "present": request.GET.get("present") == "1",  # large type for a lecture's projector
        "play_url": request.build_absolute_uri(reverse("exercises:play", args=[exercise.slug])),
    }
    return render(request, "exercises/results.html", context)


@role_required("educator")
@require_GET
def exercise_results_csv(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = _managed(request, slug)
    response = HttpResponse(results_csv(exercise), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="exercise-{exercise.slug}.csv"'
    return response
