"""Prediction exercises through Django's test client: making one from a trace (and who may), editing
its questions, a student's join and answers checked against the real trace, the class's results and
their CSV, and the privacy rules: the owner, a second educator, staff, a student and a visitor."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from tests.webapp.exercises.support import answer, exercise_of, join, post_json, traced
from tests.webapp.explorer.support import _user
from webapp.exercises.models import Answer, Exercise

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("sandbox")]


@pytest.fixture
def edgar(django_user_model: Any) -> Any:
    """A second educator: an outsider to edna's exercises."""
    return _user(django_user_model, "edgar", "educator")


def _client(user: Any = None, **defaults: Any) -> Client:
    client = Client(**defaults)
    if user is not None:
        client.force_login(user)
    return client


def _question(exercise: Exercise, kind: str) -> Any:
    return next(q for q in exercise.question_list() if q.kind == kind)


# --- making one ------------------------------------------------------------------------------------


def test_an_educator_makes_an_exercise_from_a_trace_with_proposed_questions(educator):
    trace = traced(educator)
    client = _client(educator)
    assert b'data-testid="make-exercise"' in client.get(reverse("explorer:view", args=[trace.slug])).content
    response = client.post(reverse("exercises:new", args=[trace.slug]))
    exercise = Exercise.objects.get(trace=trace)
    assert response.status_code == 302 and response["Location"] == reverse(
        "exercises:edit", args=[exercise.slug]
    )
    kinds = {q.kind for q in exercise.question_list()}
    assert kinds == {"next_line", "value", "result"}
    page = client.get(response["Location"]).content.decode()
    assert page.count('data-testid="exercise-question"') == len(exercise.questions)


def test_only_educators_and_staff_make_exercises(educator, alice, carol):
    trace = traced(educator)
    url = reverse("exercises:new", args=[trace.slug])
    assert _client(alice).post(url).status_code == 403  # a developer
    assert _client().post(url)["Location"].startswith(reverse("login"))  # a visitor
    assert b"make-exercise" not in _client(alice).get(reverse("explorer:view", args=[trace.slug])).content
    assert _client(carol).post(url).status_code == 302
    assert not Exercise.objects.filter(owner=alice).exists()


def test_a_trace_of_a_private_test_is_refused_unless_the_problems_owner_makes_it(sim_run, alice, educator):
    from django.contrib.auth.models import Group

    alice.groups.add(Group.objects.get_or_create(name="educator")[0])
    # alice owns the problem; test 2 is private. She traced it, and its permalink reached edna.
    trace = traced(
        alice, "def add_one(x):\n    y = x + 1\n    return y\n", "add_one(-1)", run=sim_run, test=2
    )
    response = _client(educator).post(reverse("exercises:new", args=[trace.slug]), follow=True)
    assert "private test" in response.content.decode()
    assert not Exercise.objects.filter(trace=trace).exists()
    assert _client(alice).post(reverse("exercises:new", args=[trace.slug])).status_code == 302
    assert Exercise.objects.filter(trace=trace, owner=alice).exists()


# --- who sees what ---------------------------------------------------------------------------------


def test_results_edit_and_csv_are_the_owners_and_staffs_alone(educator, edgar, carol, alice):
    exercise = exercise_of(educator)
    pages = [
        reverse("exercises:edit", args=[exercise.slug]),
        reverse("exercises:results", args=[exercise.slug]),
        reverse("exercises:results_csv", args=[exercise.slug]),
    ]
    for url in pages:
        assert _client(educator).get(url).status_code == 200, url
        assert _client(carol).get(url).status_code == 200, url
        assert _client(edgar).get(url).status_code == 404, url  # another educator
        assert _client(alice).get(url).status_code == 403, url  # not an educator
        assert _client().get(url)["Location"].startswith(reverse("login")), url  # a visitor or student
    assert _client(edgar).post(pages[0], {"title": "mine now"}).status_code == 404
    exercise.refresh_from_db()
    assert exercise.title == "Loops"


def test_a_visitor_opens_the_exercise_without_an_account_and_its_questions_come_without_answers(educator):
    exercise = exercise_of(educator)
    for name in ("exercises:play", "exercises:embed"):
        response = _client().get(reverse(name, args=[exercise.slug]))
        assert response.status_code == 200
        data = response.context["exercise_data"]
        assert data["token"] == "" and data["answered"] == {}
        assert all("answer" not in q and "explanation" not in q for q in data["questions"])
    assert "X-Frame-Options" not in _client().get(reverse("exercises:embed", args=[exercise.slug]))
    assert _client().get(reverse("exercises:play", args=[exercise.slug]))["X-Frame-Options"] == "DENY"


def test_a_student_sees_only_their_own_answers(educator):
    exercise = exercise_of(educator)
    question = _question(exercise, "next_line")
    ada, bob = _client(), _client()
    answer(ada, exercise, join(ada, exercise, "Ada"), question.id, question.answer)
    join(bob, exercise, "Bob")
    mine = ada.get(reverse("exercises:play", args=[exercise.slug])).context["exercise_data"]
    theirs = bob.get(reverse("exercises:play", args=[exercise.slug])).context["exercise_data"]
    assert mine["name"] == "Ada" and set(mine["answered"]) == {question.id}
    assert theirs["name"] == "Bob" and theirs["answered"] == {}
    # Another student's token is not a cookie that another browser holds: a forged one is refused.
    assert answer(bob, exercise, "not-a-token", question.id, "1").status_code == 403


def test_a_student_comes_back_by_their_token_alone_as_in_another_sites_frame(educator):
    """A frame on another site gets no cookie: the page sends the token it kept, and the same student
    comes back with their answers; a token that is not theirs is refused, and nobody new is made."""
    exercise = exercise_of(educator)
    question = _question(exercise, "value")
    first = _client()
    token = join(first, exercise, "Ada")
    answer(first, exercise, token, question.id, question.answer)
    url = reverse("exercises:join", args=[exercise.slug])
    back = post_json(_client(), url, {"token": token}).json()  # a browser holding no cookie
    assert back["token"] == token and back["name"] == "Ada"
    assert list(back["answered"]) == [question.id] and back["answered"][question.id]["status"] == "right"
    assert post_json(_client(), url, {"token": "x" * 16}).status_code == 403
    assert exercise.students.count() == 1


def test_joins_are_rate_limited_per_address(educator, settings):
    settings.EXECSIM_EXERCISE_JOINS_PER_MINUTE = 2
    exercise = exercise_of(educator)
    url = reverse("exercises:join", args=[exercise.slug])
    school, home = _client(REMOTE_ADDR="203.0.113.7"), _client(REMOTE_ADDR="198.51.100.9")
    codes = [post_json(school, url, {"name": f"Student {n}"}).status_code for n in range(3)]
    assert codes == [200, 200, 429]
    assert "Too many people joined" in post_json(school, url, {"name": "Late"}).json()["error"]
    assert post_json(home, url, {"name": "Ada"}).status_code == 200


# --- answering ---------------------------------------------------------------------------------------


def test_answers_are_checked_against_the_real_trace_once(educator):
    exercise = exercise_of(educator)
    client = _client()
    token = join(client, exercise)
    value = _question(exercise, "value")

    unreadable = answer(client, exercise, token, value.id, "[1, 2")
    assert unreadable.status_code == 400 and unreadable.json()["status"] == "unreadable"
    assert "never closed" in unreadable.json()["message"]
    assert not Answer.objects.exists()  # a typo is not an answer

    wrong = answer(client, exercise, token, value.id, "12345")
    assert wrong.status_code == 200 and wrong.json()["status"] == "wrong"
    assert wrong.json()["expected"] == value.answer and wrong.json()["explanation"] == value.explanation
    again = answer(client, exercise, token, value.id, value.answer)
    assert again.json()["status"] == "wrong" and again.json()["again"]  # the first answer counts
    assert Answer.objects.get().given == "12345"

    line = _question(exercise, "next_line")
    right = answer(client, exercise, token, line.id, f" line {line.answer} ")
    assert right.json()["status"] == "right"
    result = _question(exercise, "result")
    assert answer(client, exercise, token, result.id, "14").json()["status"] == "right"  # 1 + 4 + 9


def test_answers_are_rate_limited_per_student(educator):
    exercise = exercise_of(educator)
    ada, bob = _client(), _client()
    token = join(ada, exercise, "Ada")
    question = _question(exercise, "value")
    codes = [answer(ada, exercise, token, question.id, "(").status_code for _ in range(21)]
    assert codes[:20] == [400] * 20 and codes[20] == 429
    assert answer(bob, exercise, join(bob, exercise, "Bob"), question.id, "(").status_code == 400


def test_bad_requests_get_clear_messages(educator):
    exercise = exercise_of(educator)
    client = _client()
    url = reverse("exercises:join", args=[exercise.slug])
    assert "name" in post_json(client, url, {"name": "   "}).json()["error"]
    assert post_json(client, url, {"name": "x" * 61}).status_code == 400
    assert client.post(url, b"\xff{", content_type="application/json").status_code == 400
    token = join(client, exercise, "Ada\x00 <b>")
    assert answer(client, exercise, token, "no-such-question", "1").status_code == 404
    answer_url = reverse("exercises:answer", args=[exercise.slug])
    assert post_json(client, answer_url, {"token": token, "question": 3}).status_code == 400
    huge = answer(client, exercise, token, _question(exercise, "value").id, "9" * 100_000)
    assert huge.status_code == 400 and huge.json()["status"] == "unreadable"


def test_a_question_about_a_long_variable_name_is_answered(educator):
    name = "running_total_of_the_squares_of_every_number_in_the_list_given_to_this_function_so_far"
    exercise = exercise_of(
        educator,
        traced(
            educator,
            f"def f(xs):\n    {name} = 0\n    for x in xs:\n        {name} += x\n    return {name}\n",
            "f([1, 2])",
        ),
    )
    question = next(q for q in exercise.question_list() if q.kind == "value" and q.variable == name)
    client = _client()
    response = answer(client, exercise, join(client, exercise), question.id, question.answer)
    assert response.status_code == 200 and response.json()["status"] == "right"


# --- the class's results ---------------------------------------------------------------------------------


def test_results_show_the_share_right_the_misconceptions_and_per_student_scores(educator):
    exercise = exercise_of(educator)
    value = _question(exercise, "value")
    for name, text in (("Ada", value.answer), ("<script>alert(1)</script>", "-1"), ("Cy", "-1")):
        client = _client()
        answer(client, exercise, join(client, exercise, name), value.id, text)
    page = _client(educator).get(reverse("exercises:results", args=[exercise.slug])).content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    results = _client(educator).get(reverse("exercises:results", args=[exercise.slug])).context["results"]
    row = next(q for q in results.questions if q.id == value.id)
    assert (row.answered, row.right, row.share, row.wrong) == (3, 1, 33, [("-1", 2)])
    assert sorted((s.name, s.answered, s.right) for s in results.students) == [
        ("<script>alert(1)</script>", 1, 0),
        ("Ada", 1, 1),
        ("Cy", 1, 0),
    ]


def test_the_csv_has_one_row_per_answer_and_no_formula_runs(educator):
    exercise = exercise_of(educator)
    value = _question(exercise, "value")
    client = _client()
    answer(client, exercise, join(client, exercise, '=HYPERLINK("x")'), value.id, "-1")
    response = _client(educator).get(reverse("exercises:results_csv", args=[exercise.slug]))
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][:5] == ["student", "question", "prompt", "answer", "right"]
    assert rows[1][0] == '\'=HYPERLINK("x")' and rows[1][3] == "'-1" and rows[1][4] == "no"


# --- editing -----------------------------------------------------------------------------------------------


def _form(exercise: Exercise, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"title": exercise.title, "hide_narration": "on"}
    for n, q in enumerate(exercise.questions, 1):
        data[f"keep-{q['id']}"] = "on"
        data[f"order-{q['id']}"] = str(n)
    data.update(extra)
    return data


def test_the_educator_drops_reorders_and_adds_questions(educator, monkeypatch):
    asked: list[Any] = []
    monkeypatch.setattr("webapp.exercises.views.start_asking", asked.append)
    exercise = exercise_of(educator)
    client = _client(educator)
    url = reverse("exercises:edit", args=[exercise.slug])
    first, last = exercise.questions[0]["id"], exercise.questions[-1]["id"]
    form = _form(exercise, **{f"order-{last}": "0"})
    assert "order" in client.post(url, form, follow=True).content.decode()  # 0 is refused, said
    form = _form(exercise, **{f"order-{last}": "1", f"order-{first}": "99"})
    del form[f"keep-{exercise.questions[1]['id']}"]
    client.post(url, form)
    exercise.refresh_from_db()
    ids = [q["id"] for q in exercise.questions]
    assert ids[0] == last and ids[-1] == first
    assert len(ids) == sum(1 for key in form if key.startswith("keep-"))
    assert not asked

    steps = exercise.trace.trace["steps"]
    step = next(i for i, s in enumerate(steps) if s["event"] == "line" and s["function"] == "total" and i > 3)
    response = client.post(
        url,
        _form(exercise, add="1", add_kind="value", add_step=str(step + 1), add_variable="nope"),
        follow=True,
    )
    assert "Cannot ask that at step" in response.content.decode()
    response = client.post(url, _form(exercise, add="1", add_kind="next_line", add_step="99999"), follow=True)
    assert "step" in response.content.decode() and len(Exercise.objects.get().questions) == len(ids)
    client.post(url, _form(exercise, add="1", add_kind="value", add_step=str(step + 1), add_variable="s"))
    exercise.refresh_from_db()
    assert exercise.questions[-1]["kind"] == "value" and exercise.questions[-1]["variable"] == "s"

    client.post(url, _form(exercise, with_model="on"))
    assert [e.pk for e in asked] == [exercise.pk]  # the model is asked once the exercise asks for it


def test_a_save_with_errors_still_updates_the_live_results(educator, monkeypatch):
    told: list[Any] = []
    monkeypatch.setattr("webapp.exercises.views.changed", told.append)
    exercise = exercise_of(educator)
    before = len(exercise.questions)
    form = _form(exercise, title="")
    del form[f"keep-{exercise.questions[0]['id']}"]
    response = _client(educator).post(reverse("exercises:edit", args=[exercise.slug]), form, follow=True)
    assert "needs a title" in response.content.decode()
    exercise.refresh_from_db()
    assert len(exercise.questions) == before - 1
    assert [e.pk for e in told] == [exercise.pk]  # the question dropped is gone from the results page too


def test_an_educator_lists_their_own_exercises_with_their_students(educator, edgar):
    exercise = exercise_of(educator)
    client = _client()
    join(client, exercise, "Ada")
    page = _client(educator).get(reverse("exercises:list")).content.decode()
    assert exercise.title in page and "<td>1</td>" in page
    assert exercise.title not in _client(edgar).get(reverse("exercises:list")).content.decode()


def test_the_results_page_has_a_presentation_mode_for_a_lecture(educator):
    exercise = exercise_of(educator)
    url = reverse("exercises:results", args=[exercise.slug])
    normal = _client(educator).get(url).content.decode()
    projected = _client(educator).get(url + "?present=1").content.decode()
    assert "exercise-projected" not in normal and 'data-testid="exercise-present"' in normal
    assert "exercise-projected" in projected and 'data-testid="exercise-present-exit"' in projected
