"""A wrong final answer whose closing tag vLLM cut is a divergence everywhere a person looks: the run
page (the real-execution row, the matrix cell and the result), the explorer (opened from the row's
"see step" link) and the annotation queue ("only divergent" shows it; the review says where it went
wrong). Production mode (daphne, a Celery worker, PostgreSQL, Redis) against the fake model server,
which cuts stop strings as vLLM does."""

from __future__ import annotations

import re

import pytest

from tests.webapp.browser.flows import screenshot, solve, wait_finished, wait_until
from tests.webapp.browser.support import add_one_script, add_one_value
from webapp.annotation.models import AnnotationItem

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def wrong_answer_on_five(code: str, call: str) -> str:
    """Nothing checkable but the answer, and the answer wrong on add_one(5) (the real value is 6)."""
    value = add_one_value(code, call)
    said = 7 if call == "add_one(5)" and value == 6 else value
    thought = "[THOUGHT] add_one adds one to its argument. [/THOUGHT]"
    return f"{thought}\n[ANSWER]\nassert {call} == {said!r}\n[/ANSWER]"  # the server cuts [/ANSWER]


def test_a_wrong_answer_without_its_closing_tag_is_a_divergence_everywhere(
    fake_site, fake_model, page_for, alice, problem, annotator_user
):
    fake_model.responder = add_one_script(simulate=wrong_answer_on_five)
    page = page_for(fake_site, alice)
    console_errors: list[str] = []
    page.on("console", lambda msg: console_errors.append(msg.text) if msg.type == "error" else None)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=fake_site)
    page.goto(f"{fake_site}/problems/{problem.pk}/")
    solve(page, k=2, turns=0, real=True)
    wait_finished(page)

    # The run page: the final program's row on test 2 (add_one(5)) says where the simulation went wrong.
    wait_until(page, "document.querySelectorAll('[data-testid=execution-row]').length >= 3")
    row = page.locator("#exec-0-1")
    assert row.locator('[data-testid="execution-test"]').inner_text() == "test 2"
    verdict = row.locator('[data-testid="verification"]')
    assert (
        verdict.get_attribute("data-label") == "diverges" and verdict.get_attribute("data-answer") == "false"
    )
    sentence = verdict.locator('[data-testid="verification-sentence"]').inner_text()
    assert "answer is 7" in sentence and "returns 6" in sentence
    assert page.locator("#exec-0-0 [data-testid='verification']").get_attribute("data-label") == "agrees"
    assert page.locator("#verdict-0-1").get_attribute("data-label") == "diverges"
    assert (
        page.locator('[data-testid="final-judgement"]').inner_text() == "Accepted 3/3 (2 public, 1 private)"
    )
    final = page.locator('[data-testid="final-checks"]').inner_text()
    assert "test 2" in final and "First wrong" in final and "Agrees" in final
    screenshot(page, "run-divergence")
    page.click('[data-testid="copy-share-link"]')
    wait_until(page, "document.querySelector('[data-testid=copy-share-link]').textContent === 'Copied'")
    assert "/share/" in page.evaluate("navigator.clipboard.readText()")
    assert page.evaluate("fetch('/favicon.ico').then(r => r.ok && r.url.endsWith('favicon.svg'))")

    # Run for real afterwards: a judge's verdict per program, the wrong candidate's in words.
    page.click('[data-testid="run-real"]')
    page.wait_for_selector('[data-testid="real-summary"]')  # the real execution has ended (rows arrive live)
    wrong = page.locator('[data-testid="judgement"][data-candidate="1"]').inner_text()
    assert wrong == "#1: Wrong answer on test 1: expected 2, got 3 (0/3 passed)"
    right = page.locator('[data-testid="judgement"][data-candidate="0"]').inner_text()
    assert right == "#0: Accepted 3/3 (2 public, 1 private)"

    # The explorer, from the row's link: the same verdict, at the step.
    verdict = page.locator("#exec-0-1").locator('[data-testid="verification"]')
    verdict.locator('[data-testid="verification-link"]').click()
    page.click('[data-testid="explore-asked-open"]')
    page.wait_for_url(re.compile(r".*/explorer/t/[^/]+/#step-\d+$"))
    model = page.locator('[data-testid="ex-model"] [data-testid="verification"]')
    assert model.get_attribute("data-label") == "diverges"
    assert "answer is 7" in model.inner_text()
    assert page.locator('[data-testid="ex-model"] .claim-false').first.inner_text() == "7"
    page.click('[data-testid="copy-permalink"]')
    wait_until(page, "document.querySelector('[data-testid=copy-permalink]').textContent === 'Copied'")
    assert "/explorer/t/" in page.evaluate("navigator.clipboard.readText()")
    page.click('[data-testid="copy-embed"]')
    wait_until(page, "document.querySelector('[data-testid=copy-embed]').textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()").startswith("<iframe src=")
    assert page.errors == [] and console_errors == []

    # The annotation queue: the run's simulations were queued when it ended; "only divergent" shows it.
    item = AnnotationItem.objects.get(simulation__candidate=0, simulation__test=1, simulation__turn=0)
    assert item.divergent and item.original_check["answer"]["verdict"] == "false"
    annotator = page_for(fake_site, annotator_user)
    annotator.goto(f"{fake_site}/annotation/")
    annotator.check('input[name="divergent"]')
    annotator.click('[data-testid="queue-filters"] button[type="submit"]')
    annotator.wait_for_url(re.compile(r".*divergent=1.*"))
    rows = annotator.locator('[data-testid="queue-item"]')
    assert rows.count() >= 1 and all("yes" in text for text in rows.all_inner_texts())
    assert any(
        text.startswith(f"{item.pk}\t") or text.startswith(f"{item.pk} ") for text in rows.all_inner_texts()
    )
    annotator.goto(f"{fake_site}/annotation/items/{item.pk}/")
    annotator.click('[data-testid="claim-item"]')  # opening an item claims nothing: claiming is a POST
    review = annotator.locator('[data-testid="review-verification"] [data-testid="verification"]')
    assert review.get_attribute("data-label") == "diverges" and "returns 6" in review.inner_text()
    screenshot(annotator, "annotation-divergence")
    assert annotator.errors == []
