"""What a newcomer meets on the problem pages (issue 52): the examples in an order and with labels set in
examples/*.json, the call each test makes and the tuple slip, the reference solution that the editor
runs before saving, who solved a problem, and a Solve that waits while the model does not answer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from webapp import model_state
from webapp.problems.calls import call_of, tuple_warning
from webapp.problems.management.commands.load_examples import load_examples
from webapp.problems.models import Problem

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[3]
STDIN_LABEL = "reads input: hard for the small default model"


def _titles(client: Any, query: str = "") -> list[str]:
    page = client.get(f"/problems/{query}").content.decode()
    return re.findall(r'<td><a href="/problems/\d+/">([^<]+)</a>', page)


# -- the examples' order and labels ---------------------------------------------------------------------


def test_the_examples_come_first_in_their_files_order_with_their_labels(client, alice):
    Problem.objects.create(title="Older", statement="s", owner=alice)
    created, errors = load_examples(REPO / "examples")
    Problem.objects.create(title="Newer", statement="s", owner=alice)
    assert errors == [] and created == 6
    titles = _titles(client)
    assert titles == [
        "Reverse a string",
        "Average",
        "Count vowels",
        "Square",
        "Count up",
        "Largest number",
        "Newer",
        "Older",
    ]
    labels = dict(Problem.objects.filter(source="example").values_list("title", "label"))
    stdin = {"Square", "Count up", "Largest number"}
    assert {t for t, label in labels.items() if label == STDIN_LABEL} == stdin
    assert all(Problem.objects.get(title=t).kind == "call" for t in titles[:3])
    page = client.get("/problems/").content.decode()
    assert page.count(f'data-testid="problem-label">{STDIN_LABEL}<') == 3
    assert _titles(client, "?source=example") == titles[:6]  # a filter keeps the order


def _example(folder: Path, name: str, **fields: Any) -> None:
    data = {
        "title": name,
        "statement": "Return x.",
        "kind": "call",
        "entry_point": "f",
        "tests": [{"input": "1", "output": "1"}],
        **fields,
    }
    (folder / f"{name}.json").write_text(json.dumps(data))


def test_the_lead_sets_the_numbers_in_the_files_and_loading_again_applies_them(tmp_path, client):
    _example(tmp_path, "a", order=2, label="the model solves it")
    _example(tmp_path, "b", order=1)
    assert load_examples(tmp_path) == (2, [])
    assert _titles(client) == ["b", "a"]
    assert client.get("/problems/").content.decode().count("the model solves it") == 1
    _example(tmp_path, "a", order=1)  # measured again: a first, without its label
    _example(tmp_path, "b", order=2)
    assert load_examples(tmp_path) == (0, [])  # nothing new, but the places and labels follow the files
    assert _titles(client) == ["a", "b"]
    assert "the model solves it" not in client.get("/problems/").content.decode()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"order": -1}, "c.json: order: must be a whole number from 0 (first), not -1"),
        ({"order": "1"}, "c.json: order: must be a whole number from 0 (first), not '1'"),
        ({"order": True}, "c.json: order: must be a whole number from 0 (first), not True"),
        ({"label": "x" * 81}, "c.json: label: must be a string of at most 80 characters"),
    ],
)
def test_a_bad_order_or_label_is_reported_and_left_out(tmp_path, fields, message):
    _example(tmp_path, "c", **fields)
    assert load_examples(tmp_path) == (1, [message])
    loaded = Problem.objects.get(title="c")
    assert loaded.list_order is None and loaded.label == ""


def test_the_problem_page_shows_the_label_and_the_stdin_note(client, alice):
    load_examples(REPO / "examples")
    client.force_login(alice)
    square = Problem.objects.get(title="Square")
    page = client.get(f"/problems/{square.pk}/").content.decode()
    assert f'data-testid="problem-label">{STDIN_LABEL}<' in page and 'data-testid="stdin-note"' in page


# -- the call each test makes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "warned"),
    [
        ("([5, 7],)", "a tuple: the function gets ([5, 7],), not [5, 7]. To pass [5, 7], write [5, 7]"),
        ("(1, 'a,b')", "a tuple of 2 values. To pass them as 2 arguments, write 1, 'a,b'"),
        ("((1, 2))", "a tuple of 2 values. To pass them as 2 arguments, write 1, 2"),
        ("()", "the empty tuple ()"),
        ("(5)", ""),
        ("[5, 7]", ""),
        ("1, 'ab'", ""),
        ("(1, 2), 3", ""),
        ("(x for x in xs)", ""),
        ("'(a, b)'", ""),
        ("[1, 2", ""),  # does not parse: the form says why
    ],
)
def test_an_input_that_is_one_tuple_is_warned_of(arguments, warned):
    said = tuple_warning(arguments)
    assert (warned in said) if warned else said == ""
    if warned:
        assert said.startswith("This test passes one argument")


def test_the_call_is_the_judges():
    from simulator.pipeline.executor import program_for
    from simulator.problem import Problem as CoreProblem
    from simulator.problem import TestCase as CoreTest

    core = CoreProblem("t", "s", "call", (CoreTest("([5, 7],)", "0"),), entry_point="sum_evens")
    judged = program_for(core, "", core.tests[0]).call
    assert call_of("sum_evens", "([5, 7],)") == judged == "sum_evens(([5, 7],))"
    assert call_of("", "1") == "<entry point>(1)"


def test_the_problem_page_shows_the_call_of_each_test_of_a_call_problem(client, alice, problem):
    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    assert "<th>Call</th><th>Expected return value</th>" in page
    assert "<pre>add_one(1)</pre>" in page and "<pre>add_one(-1)</pre>" in page  # private: its owner's


def test_a_stdin_problems_tests_show_their_input(client, alice):
    load_examples(REPO / "examples")
    square = Problem.objects.get(title="Square")
    page = client.get(f"/problems/{square.pk}/").content.decode()
    assert "<th>Input</th><th>Expected output</th>" in page and "<pre>3\n</pre>" in page


# -- the editor: calls, the tuple warning, the reference solution -------------------------------------------


def _form(**extra: str) -> dict[str, str]:
    data = {
        "title": "Sum evens",
        "statement": "Return the sum of the even numbers of `xs`.",
        "kind": "call",
        "entry_point": "sum_evens",
        "is_public": "on",
        "tests-TOTAL_FORMS": "2",
        "tests-INITIAL_FORMS": "0",
        "tests-MIN_NUM_FORMS": "0",
        "tests-MAX_NUM_FORMS": "500",
        "tests-0-input": "[1, 2, 4]",
        "tests-0-output": "6",
        "tests-0-public": "on",
        "tests-1-input": "([5, 7],)",
        "tests-1-output": "0",
    }
    data.update(extra)
    return data


REFERENCE = "def sum_evens(xs):\n    return sum(x for x in xs if x % 2 == 0)\n"


def test_a_reference_that_fails_a_test_saves_nothing_and_names_the_test(client, alice, sandbox):
    client.force_login(alice)
    response = client.post("/problems/new/", _form(reference=REFERENCE))
    assert response.status_code == 200 and not Problem.objects.exists()
    check = response.context["reference_check"]
    assert list(check.failed) == [1] and not check.passed
    page = response.content.decode()
    summary = re.search(r'data-testid="reference-failures">([^<]*)<', page).group(1)
    assert summary.startswith("The reference solution fails test 2: Runtime error on test 2: TypeError")
    assert "Nothing was saved" in summary
    # the test it fails says so in its own box, and the page shows the call and the tuple warning
    assert "The reference solution: Runtime error on this test: TypeError" in page
    assert "Calls <code>sum_evens(([5, 7],))</code>" in page
    assert "This test passes one argument, a tuple" in page


def test_a_reference_that_passes_every_test_lets_the_problem_save_and_is_kept(client, alice, sandbox):
    client.force_login(alice)
    response = client.post("/problems/new/", _form(**{"tests-1-input": "[5, 7]", "reference": REFERENCE}))
    assert response.status_code == 302
    saved = Problem.objects.get()
    assert saved.reference == REFERENCE and [t.input for t in saved.tests.all()] == ["[1, 2, 4]", "[5, 7]"]
    page = client.get(response["Location"]).content.decode()
    assert "The reference solution passed all 2 tests." in page
    assert "sum(x for x in xs" not in page  # the reference stays in the editor
    assert "reference" not in client.get(f"/problems/{saved.pk}/problem.json").json()
    edit = client.get(f"/problems/{saved.pk}/edit/").content.decode()
    assert "sum(x for x in xs if x % 2 == 0)" in edit


def test_a_wrong_answer_of_the_reference_is_said_with_what_it_gave(client, alice, sandbox):
    client.force_login(alice)
    wrong = "def sum_evens(xs):\n    return sum(xs)\n"
    response = client.post("/problems/new/", _form(**{"tests-1-input": "[5, 7]", "reference": wrong}))
    assert response.status_code == 200 and not Problem.objects.exists()
    check = response.context["reference_check"]
    assert "fails tests 1, 2: Wrong answer on test 1: expected 6, got 7" in check.summary()


def test_no_reference_no_check(client, alice, monkeypatch):
    def never(*args: Any) -> None:
        raise AssertionError("the reference check ran without a reference")

    monkeypatch.setattr("webapp.problems.views.check_reference", never)
    client.force_login(alice)
    assert client.post("/problems/new/", _form(reference="  \n")).status_code == 302


def test_the_reference_runs_in_the_users_share_of_the_sandbox(client, alice, monkeypatch, settings):
    """Its programs take the user's places in the sandbox, which their runs' programs share: a user
    whose share is full gets a message, and nothing is saved."""
    from webapp.limits import sandbox_share
    from webapp.problems import reference

    monkeypatch.setattr(reference, "SHARE_WAIT_SECONDS", 0.01)
    settings.EXECSIM_MAX_PROGRAMS_PER_USER = 1
    client.force_login(alice)
    with sandbox_share(alice.pk):
        response = client.post("/problems/new/", _form(reference=REFERENCE))
    assert not Problem.objects.exists()
    summary = response.context["reference_check"].summary()
    assert summary.startswith("The reference solution could not be run: Your other programs are using")


def test_a_reference_past_the_time_budget_fails_the_tests_it_did_not_reach(
    client, alice, sandbox, monkeypatch
):
    from webapp.problems import reference

    monkeypatch.setattr(reference, "BUDGET_SECONDS", 0.0)
    client.force_login(alice)
    response = client.post("/problems/new/", _form(**{"tests-1-input": "[5, 7]", "reference": REFERENCE}))
    check = response.context["reference_check"]
    assert list(check.failed) == [1] and "not run: the reference took over 0 s" in check.failed[1]


def test_the_reference_is_limited_as_code_is(client, alice, settings):
    settings.EXECSIM_MAX_CODE_CHARS = 10
    client.force_login(alice)
    response = client.post("/problems/new/", _form(reference=REFERENCE))
    assert "is 63 characters; the limit is 10" in response.content.decode()


# -- who solved it --------------------------------------------------------------------------------------


def test_the_you_column_says_whether_the_model_or_your_program_solved_it(client, alice, problem, make_run):
    from webapp.runs.models import Execution, Run

    def standing() -> str:
        page = client.get("/problems/").content.decode()
        cell = re.search(r'data-testid="problem-standing"[^>]*>(.*?)</td>', page).group(1)
        return re.sub(r"<[^>]+>", "", cell)

    client.force_login(alice)
    model = make_run(status=Run.FINISHED, final_candidate=0)
    Execution.objects.create(run=model, candidate=0, test=0, status="ok", passed=False)
    own = make_run(status=Run.FINISHED, final_candidate=0, code="def add_one(x):\n    return x + 1\n")
    Execution.objects.create(run=own, candidate=0, test=0, status="ok", passed=False)
    assert standing() == "tried by the model · your program tried"
    Execution.objects.filter(run=own).update(passed=True)
    assert standing() == "✓ your program passed"  # what was only tried no longer matters
    Execution.objects.filter(run=model).update(passed=True)
    assert standing() == "✓ solved by the model · ✓ your program passed"
    Execution.objects.filter(run=own).update(passed=False)
    assert standing() == "✓ solved by the model"


# -- Solve while the model does not answer ----------------------------------------------------------------


@pytest.fixture
def model_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_state, "answers", lambda url: False)
    model_state.forget()
    yield
    model_state.forget()


def test_solve_waits_and_says_why_while_the_model_does_not_answer(client, alice, problem, model_down):
    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    button = re.search(r'<button type="submit" data-testid="solve-submit"[^>]*>', page).group(0)
    assert " disabled" in button
    note = re.search(r'<p class="solve-model-note"[^>]*>(.*?)</p>', page, re.S)
    assert "hidden" not in note.group(0)
    assert "The model is not answering, so a run would fail" in note.group(1)
    assert 'href="/status/model/"' in note.group(1)


def test_solve_says_the_model_is_starting_in_embedded_mode(client, alice, problem, model_down):
    model_state.starting(expected_s=150)
    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    assert "The model is starting (about 3 min): Solve opens as soon as it answers." in page


def test_solve_is_open_while_the_model_answers(client, alice, problem, monkeypatch):
    monkeypatch.setattr(model_state, "answers", lambda url: True)
    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    button = re.search(r'<button type="submit" data-testid="solve-submit"[^>]*>', page).group(0)
    assert " disabled" not in button
    assert re.search(r'<p class="solve-model-note"[^>]*hidden', page)
