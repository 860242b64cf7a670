"""Issue 13's annotator tools in Chromium: the review header's real result, "use the trace's value"
fixing false claims one click each (re-verified live, the word diff growing), "reset to original";
staff setting a queue's overlap and re-queue time (items already queued too) and picking a run from
the list; no "verified" badge on a rejection; the adjudicator's replacement text re-verified as typed,
and credited to them in the export. Takes docs/screenshots/review-diff.png
(EXECSIM_SCREENSHOTS=docs/screenshots)."""

from __future__ import annotations

import json
import re

import pytest

from tests.webapp.browser.support import SCREENSHOTS
from tests.webapp.explorer.support import FIXED_5, WRONG_5
from webapp.annotation import queue
from webapp.annotation.enqueue import enqueue_run
from webapp.annotation.models import AnnotationItem, QueuePolicy

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_fix_with_the_traces_values_see_the_diff_and_reset(page_as, live_server, sim_run, ann1):
    enqueue_run(sim_run)
    wrong = AnnotationItem.objects.get(simulation__test=1)
    page = page_as(ann1)
    page.goto(f"{live_server.url}/annotation/items/{wrong.pk}/")
    page.click('[data-testid="claim-item"]')  # opening an item claims nothing: its page offers a claim
    page.locator('[data-testid="review-real"]').wait_for()
    assert page.locator('[data-testid="review-real"]').inner_text() == "returned 6"
    text = page.locator('[data-testid="review-text"]')
    fixes = page.locator('[data-testid="use-trace-value"]')
    assert fixes.count() == 3
    fixes.first.click()  # y becomes 7 -> 6, in the box, and htmx re-verifies
    expect(fixes).to_have_count(2)
    assert text.input_value() == WRONG_5.replace("y becomes 7", "y becomes 6")
    assert page.locator('[data-testid="diff-text"] del').first.inner_text() == "7"
    assert page.locator('[data-testid="diff-text"] ins').first.inner_text() == "6"
    page.screenshot(path=str(SCREENSHOTS / "review-diff.png"), full_page=True)  # two fixes left
    fixes.first.click()
    expect(fixes).to_have_count(1)
    fixes.first.click()
    page.locator('[data-testid="verdicts"][data-verified="1"]').wait_for()
    assert text.input_value() == FIXED_5
    assert page.locator('[data-testid="diff"]').get_attribute("data-changed") == "3"
    page.click('[data-testid="reset"]')
    page.locator('[data-testid="diff"][data-changed="0"]').wait_for()
    assert text.input_value() == WRONG_5 and page.url.endswith(f"/annotation/items/{wrong.pk}/")


def test_use_the_traces_value_works_without_javascript(browser, live_server, sim_run, ann1):
    from django.test import Client

    enqueue_run(sim_run)
    wrong = AnnotationItem.objects.get(simulation__test=1)
    client = Client()
    client.force_login(ann1)
    context = browser.new_context(java_script_enabled=False)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/annotation/items/{wrong.pk}/")
        page.click('[data-testid="claim-item"]')  # a form: it works without JavaScript
        page.locator('[data-testid="use-trace-value"]').first.click()
        page.wait_for_url(re.compile(rf"/annotation/items/{wrong.pk}/fix/$"))
        assert page.locator('[data-testid="review-text"]').input_value() == WRONG_5.replace(
            "y becomes 7", "y becomes 6"
        )
        page.click('[data-testid="reset"]')
        page.wait_for_url(re.compile(rf"/annotation/items/{wrong.pk}/$"))
        assert page.locator('[data-testid="review-text"]').input_value() == WRONG_5
    finally:
        context.close()


def test_staff_set_the_overlap_pick_a_run_and_adjudicate_live(
    page_as, live_server, sim_run, ann1, ann2, carol
):
    staff = page_as(carol)
    staff.goto(f"{live_server.url}/annotation/")
    staff.select_option('[data-testid="enqueue-run"]', str(sim_run.id))
    staff.click('[data-testid="enqueue-form"] button')
    staff.wait_for_url(re.compile(r"/annotation/$"))
    assert AnnotationItem.objects.count() == 2
    staff.fill('[data-testid="policy-required"]', "2")
    staff.fill('[data-testid="policy-minutes"]', "3")  # re-queue a claimed item after 3 minutes
    staff.click('[data-testid="policy-form"] button')
    staff.wait_for_url(re.compile(r"/annotation/$"))
    assert "2 per item, claims 3 min" in staff.locator('[data-testid="policies"]').inner_text()
    # the items already queued follow the queue's new settings
    assert set(AnnotationItem.objects.values_list("required", "claim_seconds")) == {(2, 180)}
    assert QueuePolicy.objects.get(model="").required == 2

    item = AnnotationItem.objects.get(simulation__test=1)
    # ann2 rejects, though with a text that verifies: a rejection never shows a "verified" badge
    for user, decision, text in ((ann1, "accept", FIXED_5), (ann2, "reject", FIXED_5)):
        queue.claim(item, user)
        queue.submit(item, user, decision, text)
    staff.goto(f"{live_server.url}/annotation/adjudication/{item.pk}/")
    badges = staff.locator('[data-testid="adjudicate-badge"]')
    assert badges.all_inner_texts() == ["verified", "rejected the model's text"]
    assert badges.nth(1).locator(".ok").count() == 0
    verdicts = staff.locator('[data-testid="adjudicate-verdicts"] [data-testid="verdicts"]')
    assert verdicts.get_attribute("data-verified") == "1"  # ann1's text, chosen by default
    staff.fill('[data-testid="adjudicate-text"]', WRONG_5.replace("y becomes 7", "y becomes 6"))
    staff.locator(
        '[data-testid="adjudicate-verdicts"] [data-testid="verdicts"][data-verified="0"]'
    ).wait_for()
    assert (
        "returns 7"
        in staff.locator('[data-testid="adjudicate-verdicts"] [data-label="diverges"]').inner_text()
    )
    # a replacement that verifies, accepted: the export credits it to the adjudicator
    replacement = FIXED_5.replace("add_one is called", "add_one gets called")
    staff.fill('[data-testid="adjudicate-text"]', replacement)
    staff.locator(
        '[data-testid="adjudicate-verdicts"] [data-testid="verdicts"][data-verified="1"]'
    ).wait_for()
    staff.click('[data-testid="adjudicate-accept"]')
    staff.wait_for_url(re.compile(r"/annotation/adjudication/$"))
    export = staff.request.get(f"{live_server.url}/annotation/export.jsonl")  # verified records
    [record] = [json.loads(line) for line in export.text().splitlines()]
    assert record["completion"] == replacement
    assert record["annotator"] == "carol" and record["adjudicator"] == "carol"
