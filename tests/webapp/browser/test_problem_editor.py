"""The problem editor in a browser (issue 13): add and remove tests without saving (with JavaScript and
without), every error at its field, a broken literal explained, tests kept in order, private tests shown
to their owner only."""

from __future__ import annotations

from typing import Any

import pytest

from tests.webapp.browser.flows import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

VISIBLE_TESTS = "document.querySelectorAll('fieldset.test:not([hidden])').length"


def _cells(page: Any, testid: str) -> list[str]:
    return page.locator(f'[data-testid="{testid}"] tbody tr td:nth-child(2)').all_inner_texts()


def _error(page: Any, field: str) -> str:
    """The error shown right after the field's own input (its <p>), '' if none."""
    return page.evaluate(
        "(id) => { const e = document.getElementById(id).parentElement.querySelector('.field-error');"
        " return e ? e.textContent : ''; }",
        f"id_{field}",
    )


def _fill_test(page: Any, index: int, given: str, expected: str, public: bool) -> None:
    page.fill(f"#id_tests-{index}-input", given)
    page.fill(f"#id_tests-{index}-output", expected)
    page.set_checked(f"#id_tests-{index}-public", public)


def test_the_editor_adds_and_removes_tests_shows_every_error_and_keeps_the_order(
    fake_site, page_for, alice, bob
):
    page = page_for(fake_site, alice)
    page.goto(f"{fake_site}/problems/new/")
    page.fill("#id_title", "Add one")
    page.fill("#id_statement", "Return `x + 1`.")
    page.select_option("#id_kind", "call")
    page.fill("#id_entry_point", "not valid")
    _fill_test(page, 0, "0", "1", True)
    _fill_test(page, 1, "5", "[6, 3", True)
    page.evaluate("window.notReloaded = true")
    page.click('[data-testid="add-test"]')
    page.click('[data-testid="add-test"]')
    wait_until(page, f"{VISIBLE_TESTS} === 4")
    _fill_test(page, 2, "7", "8", True)
    _fill_test(page, 3, "-1", "0", False)
    page.locator("fieldset.test").nth(0).locator('[data-testid="remove-test"]').click()
    wait_until(page, f"{VISIBLE_TESTS} === 3")
    assert page.evaluate("window.notReloaded === true")  # nothing was saved nor reloaded
    assert page.locator("fieldset.test:not([hidden]) .test-number").all_inner_texts() == ["1", "2", "3"]
    assert page.input_value("#id_tests-TOTAL_FORMS") == "4"

    page.click('[data-testid="problem-save"]')
    page.wait_for_selector('[data-testid="field-error"]')
    # all errors at once, each under its own field
    assert _error(page, "entry_point") == "call problems need the name of the function to call"
    assert _error(page, "kind") == ""
    assert _error(page, "tests-1-output") == (
        "is not a Python literal: the list opened with [ at column 1 is never closed (add its ])"
    )
    assert page.locator("fieldset.test:not([hidden])").count() == 3  # the removed test stays removed

    page.fill("#id_entry_point", "add_one")
    page.fill("#id_tests-1-output", "6")
    page.click('[data-testid="problem-save"]')
    page.wait_for_selector('[data-testid="problem-title"]')
    problem_url = page.url
    assert _cells(page, "public-tests") == ["add_one(5)", "add_one(7)"]  # each test as the call it makes
    assert _cells(page, "private-tests") == ["add_one(-1)"]  # the owner sees them

    # editing: a new test goes where it was added, and the order survives the save
    page.click('[data-testid="edit-problem"]')
    page.click('[data-testid="add-test"]')
    wait_until(page, "document.getElementById('id_tests-5-input') !== null")
    _fill_test(page, 5, "9", "10", True)
    page.click('[data-testid="problem-save"]')
    page.wait_for_selector('[data-testid="problem-title"]')
    assert _cells(page, "public-tests") == ["add_one(5)", "add_one(7)", "add_one(9)"]
    assert page.errors == []  # type: ignore[attr-defined]

    other = page_for(fake_site, bob)
    other.goto(problem_url)
    other.wait_for_selector('[data-testid="public-tests"]')
    assert other.locator('[data-testid="private-tests"]').count() == 0
    assert "-1" not in other.locator("main").inner_text().split("Public tests")[1].split("Solve")[0]


def test_add_and_remove_work_without_javascript(fake_site, chromium, alice):
    from django.test import Client

    client = Client()
    client.force_login(alice)
    context = chromium.new_context(java_script_enabled=False)
    try:
        context.add_cookies(
            [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": fake_site}]
        )
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{fake_site}/problems/new/")
        page.fill("#id_title", "Double")
        page.fill("#id_statement", "Return twice x.")
        page.select_option("#id_kind", "call")
        page.fill("#id_entry_point", "double")
        _fill_test(page, 0, "1", "2", True)
        page.click('[data-testid="add-test"]')  # a real submit: the form comes back with a third test
        page.wait_for_selector("#id_tests-2-input")
        assert page.input_value("#id_tests-0-input") == "1"
        assert page.locator('[data-testid="field-error"]').count() == 0
        _fill_test(page, 1, "2", "4", False)
        _fill_test(page, 2, "3", "6", True)
        page.locator("fieldset.test").nth(0).locator('[data-testid="remove-test"]').click()
        page.wait_for_selector('fieldset.test[data-removed="1"]', state="attached")
        assert page.locator("fieldset.test:not([hidden])").count() == 2
        page.click('[data-testid="problem-save"]')
        page.wait_for_selector('[data-testid="problem-title"]')
        assert page.locator('[data-testid="public-tests"] tbody tr td:nth-child(2)').all_inner_texts() == [
            "double(3)"
        ]
        assert page.locator('[data-testid="private-tests"] tbody tr td:nth-child(2)').all_inner_texts() == [
            "double(2)"
        ]
    finally:
        context.close()


def test_the_solve_form_folds_its_settings_and_opens_them_on_an_invalid_one(
    fake_site, page_for, alice, problem
):
    """k and "run for real" up front; the settings with their measured effects behind "More settings",
    which a field the browser refuses opens, so the user sees why nothing was sent."""
    page = page_for(fake_site, alice)
    page.goto(f"{fake_site}/problems/{problem.pk}/")
    assert page.is_visible("#id_k") and page.is_checked("#id_real")
    assert not page.is_visible("#id_turns") and not page.is_visible("#id_temperature")
    page.eval_on_selector("#id_temperature", "input => { input.value = '5'; }")  # above its max, 2
    page.click('[data-testid="solve-submit"]')
    wait_until(page, "document.querySelector('details.more-settings').open")
    assert page.is_visible("#id_temperature") and page.url.endswith(f"/problems/{problem.pk}/")
    assert page.evaluate("document.querySelector('#id_temperature').validity.rangeOverflow")
