"""The annotation workflow in Chromium: edit a simulated trace and see a wrong claim flagged, fix it,
accept from the keyboard; a second annotator skips, undoes and rejects; staff adjudicate the
disagreement; the export follows. Also takes the review.png screenshot."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.webapp.browser.support import SCREENSHOTS
from tests.webapp.explorer.support import FIXED_5, WRONG_5
from webapp.annotation.enqueue import enqueue_run
from webapp.annotation.models import Annotation, AnnotationItem


def _review(item: AnnotationItem) -> re.Pattern[str]:
    return re.compile(rf"/annotation/items/{item.pk}/(\?[^#]*)?(#.*)?$")


expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_annotate_adjudicate_and_export(page_as, live_server, sim_run, ann1, ann2, carol, tmp_path: Path):
    enqueue_run(sim_run, required=2)
    right = AnnotationItem.objects.get(simulation__test=0)
    wrong = AnnotationItem.objects.get(simulation__test=1)

    # ann1: only divergent items -> the wrong simulation; a wrong edit is flagged, the fix verifies.
    page = page_as(ann1)
    page.goto(f"{live_server.url}/annotation/?divergent=1")
    assert page.locator('[data-testid="queue-waiting"]').inner_text() == "1"
    page.click('[data-testid="queue-start"]')
    page.wait_for_url(_review(wrong))
    assert "y becomes 7" in page.locator('[data-testid="review-verification"]').inner_text()
    text = page.locator('[data-testid="review-text"]')
    text.fill(WRONG_5.replace("y becomes 7", "y becomes 8"))
    flag = page.locator('[data-testid="verdicts"] [data-label="diverges"]')
    flag.wait_for()
    expect(flag).to_contain_text("y becomes 8")  # (a string predicate would need CSP unsafe-eval)
    page.locator('[data-testid="review-original"] .claim-false').first.click()  # jumps the trace
    assert page.locator('[data-testid="ex-step"]').inner_text() == "3"  # index 2, shown from 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "review.png"), full_page=True)
    text.fill(FIXED_5)
    page.locator('[data-testid="verdicts"] [data-label="agrees"]').wait_for()
    assert page.locator('[data-testid="verdicts"]').get_attribute("data-false") == "0"
    text.press("Escape")
    page.keyboard.press("a")
    page.wait_for_url(re.compile(r"/annotation/\?divergent=1$"))  # nothing divergent left: the queue
    saved = Annotation.objects.get(annotator=ann1)
    assert saved.decision == "accept" and saved.text == FIXED_5 and saved.verified

    # ann2: skip (space), undo (backspace), skip again, then reject (x) the wrong one.
    page2 = page_as(ann2)
    page2.goto(f"{live_server.url}/annotation/")
    page2.click('[data-testid="queue-start"]')  # claiming is a POST: the queue's form
    page2.wait_for_url(_review(right))
    page2.keyboard.press(" ")
    page2.wait_for_url(_review(wrong))
    assert "0 done so far" in page2.locator("main").inner_text()  # a skip is not done
    page2.keyboard.press("Backspace")
    page2.wait_for_url(_review(right))
    assert not Annotation.objects.filter(annotator=ann2).exists()
    assert list(AnnotationItem.objects.filter(claimed_by=ann2)) == [right]  # undo: one item claimed
    page2.keyboard.press(" ")
    page2.wait_for_url(_review(wrong))
    page2.keyboard.press("x")
    page2.wait_for_url(re.compile(r"/annotation/$"))
    wrong.refresh_from_db()
    assert wrong.status == AnnotationItem.DISPUTED

    # Staff adjudicate: accept ann1's correction; the export follows.
    staff = page_as(carol, accept_downloads=True)
    staff.goto(f"{live_server.url}/annotation/adjudication/")
    staff.click('[data-testid="adjudicate-link"]')
    staff.check(f'input[name="chosen"][value="{saved.pk}"]')
    staff.click('[data-testid="adjudicate-accept"]')
    staff.wait_for_url(re.compile(r"/annotation/adjudication/$"))
    wrong.refresh_from_db()
    assert wrong.status == AnnotationItem.ADJUDICATED and wrong.decision == "accept"
    staff.click('[data-testid="export-link"]')  # the export page: verified records by default
    with staff.expect_download() as download:
        staff.click('[data-testid="export-download"]')
    path = tmp_path / "export.jsonl"
    download.value.save_as(str(path))
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert (
        record["completion"] == FIXED_5 and record["annotator"] == "ann1" and record["adjudicator"] == "carol"
    )
    assert record["decided_by"] == "adjudication" and record["verification"]["verified"] is True
