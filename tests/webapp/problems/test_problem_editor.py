"""The problem editor (issue 13): add and remove tests without saving, every error at its field, literals
explained, tests kept in order, and private tests on the problem page for their owner only."""

from __future__ import annotations

import pytest

from tests.webapp.posts import problem_post as _form
from webapp.problems.models import Problem

pytestmark = pytest.mark.django_db


def _edit_data(problem, **overrides):
    tests = list(problem.tests.all())
    data = _form([(t.input, t.output, t.public) for t in tests], title=problem.title, entry_point="add_one")
    data["tests-INITIAL_FORMS"] = str(len(tests))
    for i, test in enumerate(tests):
        data[f"tests-{i}-id"] = str(test.pk)
    data.update(overrides)
    return data


def _field_errors(response, form_index=None):
    if form_index is None:
        return response.context["form"].errors
    return response.context["formset"].forms[form_index].errors


def test_it_adds_a_test_without_saving_and_without_errors(client, alice):
    client.force_login(alice)
    data = _form([("1", "2", True), ("", "", False)], title="", add_test="1")
    response = client.post("/problems/new/", data)
    assert response.status_code == 200
    assert not Problem.objects.exists()
    formset = response.context["formset"]
    assert len(formset.forms) == 3
    assert formset.forms[0]["input"].value() == "1"  # what was typed stays
    page = response.content.decode()
    assert 'id="id_tests-2-input"' in page
    assert 'data-testid="field-error"' not in page  # not submitted yet: no errors shown


def test_it_removes_a_test_without_saving_then_saves_without_it(client, alice):
    client.force_login(alice)
    data = _form([("1", "2", True), ("2", "4", True), ("3", "6", False)], remove_test="1")
    response = client.post("/problems/new/", data)
    assert response.status_code == 200
    assert not Problem.objects.exists()
    page = response.content.decode()
    assert page.count('data-removed="1"') == 1  # the removed test is hidden, marked for Save
    data = _form([("1", "2", True), ("2", "4", True), ("3", "6", False)], **{"tests-1-DELETE": "on"})
    assert client.post("/problems/new/", data).status_code == 302
    assert [t.input for t in Problem.objects.get().tests.all()] == ["1", "3"]


def test_the_form_ships_the_empty_form_and_its_script(client, alice):
    client.force_login(alice)
    page = client.get("/problems/new/").content.decode()
    assert '<template id="test-template">' in page and 'id="id_tests-__prefix__-input"' in page
    assert "js/problem-form.js" in page
    assert "<script>" not in page.split("<main>")[1]  # no inline script (the CSP)


def test_it_reports_every_error_at_once_each_at_its_field(client, alice):
    client.force_login(alice)
    data = _form(
        [("1", "[1, 3", True), ("1,, 2", "4", False)],
        title="",
        entry_point="not valid",
        float_tolerance="abc",
    )
    response = client.post("/problems/new/", data)
    assert response.status_code == 200
    errors = _field_errors(response)
    assert set(errors) == {"title", "entry_point", "float_tolerance"}
    assert errors["entry_point"] == ["call problems need the name of the function to call"]
    assert "output" in _field_errors(response, 0) and "input" in _field_errors(response, 1)
    assert not response.context["form"].non_field_errors()
    page = response.content.decode()
    # the entry point's error follows its own input, not the Kind field above it
    assert (
        page.index('id="id_entry_point"')
        < page.index("call problems need")
        < page.index('id="id_float_tolerance"')
    )


def test_a_literal_that_does_not_parse_is_explained(client, alice):
    client.force_login(alice)
    response = client.post("/problems/new/", _form([("1", "[1, 3", True)]))
    assert _field_errors(response, 0)["output"] == [
        "is not a Python literal: the list opened with [ at column 1 is never closed (add its ])"
    ]
    assert "does not match opening parenthesis" not in response.content.decode()


def test_the_public_test_rule_is_shown_with_the_tests(client, alice):
    client.force_login(alice)
    response = client.post("/problems/new/", _form([("1", "2", False)]))
    assert response.context["tests_errors"] == ["at least one test must be public"]
    assert not response.context["form"].non_field_errors()


def test_tests_keep_their_order_after_editing(client, alice, problem):
    client.force_login(alice)
    data = _edit_data(problem)
    data.update(
        {"tests-TOTAL_FORMS": "5", "tests-3-input": "10", "tests-3-output": "11", "tests-3-public": "on"}
    )
    data.update({"tests-4-input": "20", "tests-4-output": "21"})
    data["tests-0-DELETE"] = "on"
    response = client.post(f"/problems/{problem.pk}/edit/", data)
    assert response.status_code == 302
    assert [t.input for t in problem.tests.all()] == ["5", "-1", "10", "20"]
    assert [t.order for t in problem.tests.all()] == [0, 1, 2, 3]
    # and again: editing the saved problem keeps that order
    response = client.post(f"/problems/{problem.pk}/edit/", _edit_data(problem))
    assert response.status_code == 302
    assert [t.input for t in problem.tests.all()] == ["5", "-1", "10", "20"]


def test_the_owner_and_staff_see_the_private_tests_on_the_problem_page(client, alice, bob, carol, problem):
    """As in the edit form, which staff may open too, and on the problem's runs (runs/privacy.py)."""
    url = f"/problems/{problem.pk}/"
    for someone, says in ((alice, "Only you and staff"), (carol, "Only its owner and staff")):
        client.force_login(someone)
        response = client.get(url)
        private = response.context["private_tests"]
        assert [(n, t.input, call) for n, t, call in private] == [(3, "-1", "add_one(-1)")]
        assert 'data-testid="private-tests"' in response.content.decode()
        assert says in response.content.decode()
    client.force_login(bob)  # another user
    response = client.get(url)
    assert response.context["private_tests"] == []
    assert 'data-testid="private-tests"' not in response.content.decode()
    client.logout()  # a visitor
    response = client.get(url)
    assert response.context["private_tests"] == []
    assert 'data-testid="private-tests"' not in response.content.decode()


def test_the_problem_page_numbers_tests_as_its_runs_do(client, alice, bob, problem):
    """One count over public and private tests, from 1: the real-execution table of a run names the
    private test "test 3" (``Run.test_label``), so the owner's page numbers it 3, not 0 of a second list."""
    from webapp.runs.models import Run

    client.force_login(alice)
    response = client.get(f"/problems/{problem.pk}/")
    numbers = [n for n, _, _ in response.context["public_tests"] + response.context["private_tests"]]
    assert [Run.test_label(n - 1) for n in numbers] == ["test 1", "test 2", "test 3"]
    page = response.content.decode()
    assert "<tr><td>3</td><td><pre>add_one(-1)</pre>" in page  # a call problem's test: the call it makes
    client.force_login(bob)
    assert [n for n, _, _ in client.get(f"/problems/{problem.pk}/").context["public_tests"]] == [1, 2]
