"""Issue 52, "What a newcomer meets", the annotator's and staff's items, in Chromium: each one-click fix
names the claim it changes (and lights it up on hover); a line that never ran is removed in one click,
sentence and all; the word diff keeps a replaced value whole, on the line of what it replaces; the
queue-settings message counts the items the queue lists; the agreement page gives its n, a caution
on a small sample and the annotator pairs; the export page offers its filters."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.webapp.browser.support import SCREENSHOTS
from webapp.annotation import queue
from webapp.annotation.enqueue import enqueue_run
from webapp.annotation.models import Annotation, AnnotationItem

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# add_one(1) gives 2.0; the model says 3 three times, and narrates line 4, which never runs.
FLOAT_CODE = "def add_one(x):\n    y = x + 1.0\n    if y < 0:\n        y = 0\n    return y\n"
HALLUCINATED = "Line 4: y is reset to zero.\n"
FLOAT_TEXT = (
    "[THOUGHT] add_one is called with x = 1.\nLine 2: y becomes 3.\n"
    + HALLUCINATED
    + "Line 5: it returns 3. "
    "[/THOUGHT]\n[ANSWER] assert add_one(1) == 3 [/ANSWER]"
)
FLOAT_FIXED = FLOAT_TEXT.replace(HALLUCINATED, "").replace(" 3", " 2.0")


@pytest.fixture
def float_item(make_run: Any) -> AnnotationItem:
    from webapp.runs.models import Candidate, Simulation

    run = make_run(status="finished", provenance={"model": "smollm2-test"})
    Candidate.objects.create(run=run, index=0, code=FLOAT_CODE, done=True)
    Simulation.objects.create(run=run, candidate=0, test=0, text=FLOAT_TEXT, predicted="3", done=True)
    enqueue_run(run)
    return AnnotationItem.objects.get()


def _review(page: Any, url: str, item: AnnotationItem) -> None:
    page.goto(f"{url}/annotation/items/{item.pk}/")
    page.click('[data-testid="claim-item"]')  # a GET claims nothing: its page offers the claim
    page.locator('[data-testid="review-text"]').wait_for()
    page.wait_for_load_state()  # htmx set up: the box's edits are checked as typed


def test_each_fix_names_its_claim_and_lights_it_up_on_hover(page_as, live_server, float_item, ann1):
    page = page_as(ann1)
    _review(page, live_server.url, float_item)
    rows = page.locator('[data-testid="fixes"] li')
    expect(rows).to_have_count(3)
    texts = rows.all_inner_texts()
    assert len(set(texts)) == 3, texts  # three buttons, each saying which claim it changes
    assert "“y becomes 3” (line 2)" in texts[0] and "3 → 2.0" in texts[0]
    assert "“returns 3” (line 5)" in texts[1]
    assert "the answer “assert add_one(1) == 3”" in texts[2]
    button = rows.nth(1).locator('[data-testid="use-trace-value"]')
    expect(button).to_have_accessible_description(re.compile("returns 3"))
    lit = page.locator('[data-testid="verdicts-text"] .claim-focus')
    expect(lit).to_have_count(0)
    button.hover()
    expect(lit).to_have_count(1)
    expect(lit).to_have_text("returns 3")
    page.locator("#verdicts").screenshot(path=str(SCREENSHOTS / "review-fixes.png"))
    rows.nth(0).hover()
    expect(lit).to_have_text("y becomes 3")
    page.locator("h1").hover()
    expect(lit).to_have_count(0)
    button.focus()  # the keyboard lights it up too
    expect(lit).to_have_text("returns 3")


def test_a_line_that_never_ran_is_removed_in_one_click(page_as, live_server, float_item, ann1):
    page = page_as(ann1)
    _review(page, live_server.url, float_item)
    text = page.locator('[data-testid="review-text"]')
    remove = page.locator('[data-testid="remove-sentence"]')
    expect(remove).to_have_count(1)
    row = page.locator('[data-testid="remove"]')
    assert "Line 4: y is reset to zero." in row.inner_text() and "line 4" in row.inner_text()
    remove.hover()
    expect(page.locator('[data-testid="verdicts-text"] .claim-focus')).to_have_text("Line 4")
    remove.click()
    expect(remove).to_have_count(0)
    assert text.input_value() == FLOAT_TEXT.replace(HALLUCINATED, "")
    fixes = page.locator('[data-testid="use-trace-value"]')
    for left in (2, 1, 0):
        fixes.first.click()
        expect(fixes).to_have_count(left)
    page.locator('[data-testid="verdicts"][data-verified="1"]').wait_for()
    assert text.input_value() == FLOAT_FIXED


def test_the_word_diff_keeps_a_replaced_value_whole_and_inline(page_as, live_server, float_item, ann1):
    page = page_as(ann1)
    _review(page, live_server.url, float_item)
    # by hand: the first value fixed and the line that never ran deleted
    page.fill(
        '[data-testid="review-text"]', FLOAT_TEXT.replace("y becomes 3.\n" + HALLUCINATED, "y becomes 2.0.\n")
    )
    diff = page.locator('[data-testid="diff-text"]')
    diff.wait_for()
    expect(diff.locator("ins")).to_have_text(["2.0"])
    assert diff.locator("del").all_text_contents() == ["3", HALLUCINATED]
    removed, added = diff.locator("del").first.bounding_box(), diff.locator("ins").first.bounding_box()
    assert removed["y"] == added["y"] and removed["x"] < added["x"]  # 2.0 beside the 3 it replaces


def _copy_of(run: Any, make_run: Any) -> Any:
    """Another run with ``run``'s candidates and simulations: queued, its items are duplicates."""
    from webapp.runs.models import Candidate, Simulation

    copy = make_run(status="finished", provenance=run.provenance)
    for candidate in run.candidates.all():
        Candidate.objects.create(run=copy, index=candidate.index, code=candidate.code, done=True)
    for sim in run.simulations.all():
        Simulation.objects.create(
            run=copy,
            candidate=sim.candidate,
            test=sim.test,
            text=sim.text,
            predicted=sim.predicted,
            done=True,
        )
    return copy


def test_the_queue_settings_message_counts_what_the_queue_lists(
    page_as, live_server, make_run, sim_run, ann1, carol
):
    enqueue_run(sim_run)
    enqueue_run(_copy_of(sim_run, make_run))  # the same texts again: set aside as duplicates
    right = AnnotationItem.objects.filter(status=AnnotationItem.OPEN).get(simulation__test=0)
    queue.claim(right, ann1)
    queue.submit(right, ann1, Annotation.ACCEPT, right.text)  # done with 1 per item
    staff = page_as(carol)
    staff.goto(f"{live_server.url}/annotation/")
    listed = staff.locator('[data-testid="queue-item"]').count()
    assert listed == 2
    staff.fill('[data-testid="policy-required"]', "2")
    staff.click('[data-testid="policy-form"] button')
    staff.wait_for_url(re.compile(r"/annotation/$"))
    message = staff.locator('[data-testid="messages"]').inner_text()
    assert f"{listed} items" in message, message
    assert "1 done item reopened" in message, message
    assert not re.search(r"\b4\b", message), message  # not the duplicates counted as queued items


def test_the_agreement_page_gives_n_a_small_sample_caution_and_the_pairs(
    page_as, live_server, sim_run, ann1, ann2, carol
):
    enqueue_run(sim_run, required=2)
    right, wrong = AnnotationItem.objects.order_by("simulation__test")
    for item, first, second in ((right, "accept", "reject"), (wrong, "reject", "accept")):
        for user, decision in ((ann1, first), (ann2, second)):
            queue.claim(item, user)
            queue.submit(item, user, decision, item.text)
    page = page_as(ann1)
    page.goto(f"{live_server.url}/annotation/agreement/")
    assert page.locator('[data-testid="decision-alpha"]').inner_text() == "-0.500"
    caution = page.locator('[data-testid="small-sample"]')
    expect(caution).to_be_visible()
    expect(caution).to_contain_text("2 items")
    assert page.locator('[data-testid="decision-n"]').inner_text() == "2 items"
    pairs = page.locator('[data-testid="pairs"]')
    cell = pairs.locator('[data-pair="ann1 ann2"]')
    expect(cell).to_contain_text("0%")
    expect(cell).to_contain_text("2 items")
    page.screenshot(path=str(SCREENSHOTS / "agreement.png"), full_page=True)


def test_the_export_page_offers_its_filters(page_as, live_server, sim_run, ann1, carol, tmp_path):
    enqueue_run(sim_run)
    right, wrong = AnnotationItem.objects.order_by("simulation__test")
    queue.claim(right, ann1)
    queue.submit(right, ann1, Annotation.ACCEPT, right.text)  # verified
    queue.claim(wrong, ann1)
    queue.submit(wrong, ann1, Annotation.ACCEPT, wrong.text)  # accepted as it was: unverified
    staff = page_as(carol, accept_downloads=True)
    staff.goto(f"{live_server.url}/annotation/")
    staff.click('[data-testid="export-link"]')
    form = staff.locator('[data-testid="export-form"]')
    expect(staff.locator('[data-testid="export-count"]')).to_contain_text("1 record")  # verified
    assert form.locator('select[name="status"] option').all_inner_texts()[:3] == [
        "verified",
        "unverified",
        "all",
    ]
    form.locator('select[name="status"]').select_option("unverified")
    form.locator('select[name="model"]').select_option("smollm2-test")
    staff.click('[data-testid="export-show"]')
    expect(staff.locator('[data-testid="export-count"]')).to_contain_text("1 record")
    staff.screenshot(path=str(SCREENSHOTS / "export.png"), full_page=True)
    with staff.expect_download() as download:
        staff.click('[data-testid="export-download"]')
    path = tmp_path / "export.jsonl"
    download.value.save_as(str(path))
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["item"] == wrong.pk and record["verification"]["verified"] is False
    # by date: nothing decided from tomorrow on; everything up to today
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    form.locator('select[name="status"]').select_option("all")
    form.locator('input[name="since"]').fill(tomorrow)
    staff.click('[data-testid="export-show"]')
    expect(staff.locator('[data-testid="export-count"]')).to_contain_text("0 records")
    form.locator('input[name="since"]').fill("")
    form.locator('input[name="until"]').fill(timezone.localdate().isoformat())
    staff.click('[data-testid="export-show"]')
    expect(staff.locator('[data-testid="export-count"]')).to_contain_text("2 records")


def test_the_new_parts_pass_axe_and_fit_a_phone(page_as, live_server, float_item, sim_run, ann1, ann2, carol):
    """The fixes' rows and the removal, the agreement page with its caution and pairs, the export page:
    axe-core's checks (as tests/webapp/browser/test_accessibility.py runs them), and no sideways
    scrolling at 390 px."""
    axe = pytest.importorskip("axe_playwright_python.sync_playwright", reason="the dev extra is missing")
    enqueue_run(sim_run, required=2)
    for item in AnnotationItem.objects.filter(simulation__run=sim_run):
        for user, decision in ((ann1, "accept"), (ann2, "reject")):
            queue.claim(item, user)
            queue.submit(item, user, decision, item.text)
    found: list[str] = []

    def check(page: Any) -> None:
        for v in axe.Axe().run(page).response["violations"]:
            found.append(f"{page.url}: {v['impact']} {v['id']} at {[n['target'] for n in v['nodes'][:3]]}")

    page = page_as(ann1)
    _review(page, live_server.url, float_item)
    page.locator('[data-testid="use-trace-value"]').nth(1).hover()
    check(page)
    staff = page_as(carol)
    for path in ("/annotation/agreement/", "/annotation/export/?status=all"):
        staff.goto(live_server.url + path)
        check(staff)
        staff.set_viewport_size({"width": 390, "height": 800})
        wide = staff.evaluate("document.documentElement.scrollWidth")
        assert wide <= 390, f"{path} is {wide} px wide at 390"
        staff.set_viewport_size({"width": 1400, "height": 1000})
    assert found == []
