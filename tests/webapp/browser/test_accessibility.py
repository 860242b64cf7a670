"""Every kind of page passes axe-core's checks (WCAG 2 A/AA and best practices: labels, contrast,
landmarks, heading order, keyboard access to scrolling regions), as a visitor, a developer and an
annotator see it: the problem list, a problem with its settings open, a finished run with its real
execution (and its share link), the explorer on a trace (and its embed), Simulate my code, the import
page, a page with a message, run history, a review in the annotation queue and the 404 page.
Production mode against the fake model server."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.webapp.browser.flows import solve, wait_finished, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

axe_playwright = pytest.importorskip(
    "axe_playwright_python.sync_playwright", reason="the dev extra is missing"
)


def violations(page: Any) -> list[str]:
    """axe-core's violations on the page as it is now, one line each: impact, rule, where."""
    found = axe_playwright.Axe().run(page).response["violations"]
    return [f"{page.url}: {v['impact']} {v['id']} at {[n['target'] for n in v['nodes'][:3]]}" for v in found]


def test_every_kind_of_page_passes_axe(fake_site, page_for, alice, problem, annotator_user):
    found: list[str] = []
    visitor = page_for(fake_site)
    for path in ("/problems/", f"/problems/{problem.pk}/", "/accounts/login/", "/accounts/signup/", "/nope/"):
        visitor.goto(fake_site + path)
        found += violations(visitor)

    page = page_for(fake_site, alice)
    page.goto(f"{fake_site}/problems/{problem.pk}/")
    page.locator('[data-testid="more-settings"]').evaluate("details => { details.open = true; }")
    found += violations(page)
    solve(page, k=2, turns=0, real=True)
    wait_finished(page)
    wait_until(page, "document.querySelectorAll('[data-testid=execution-row]').length >= 3")
    found += violations(page)
    run_url = page.url
    share_url = page.locator('[data-testid="share-link"]').get_attribute("href")
    page.click('[data-testid="open-explorer"]')
    found += violations(page)  # the run's explorer page: which candidate's trace to open
    page.locator('[data-testid="explore-candidate"]').first.click()
    page.wait_for_url(re.compile(r".*/explorer/t/[^/]+/.*"))
    page.keyboard.press("End")  # the last step: frames, objects and the output all drawn
    found += violations(page)
    embed_url = page.locator('[data-testid="ex-embed-link"]').get_attribute("href")
    for path in ("/simulate/", "/explorer/", "/problems/import/", "/problems/new/", "/runs/"):
        page.goto(fake_site + path)
        found += violations(page)
    # a page that shows a message (the import's, on the problem it imported)
    page.goto(f"{fake_site}/problems/import/")
    problem_file = b'{"title": "Echo", "statement": "Echo it.", "tests": [{"input": "a", "output": "a"}]}'
    page.set_input_files(
        "#id_file", files=[{"name": "p.json", "mimeType": "application/json", "buffer": problem_file}]
    )
    page.click('[data-testid="import-submit"]')
    page.wait_for_selector('[data-testid="messages"]')
    found += violations(page)
    for url in (run_url, share_url, embed_url):  # a public problem's run, its share link, the trace's embed
        visitor.goto(url if url.startswith("http") else fake_site + url)
        found += violations(visitor)

    annotator = page_for(fake_site, annotator_user)
    annotator.goto(fake_site + "/annotation/")
    found += violations(annotator)
    annotator.click('[data-testid="queue-start"]')  # claiming is a POST: the queue's form
    annotator.wait_for_url(re.compile(r".*/annotation/items/\d+/"))
    found += violations(annotator)
    assert re.search(r"/annotation/items/\d+/", annotator.url), "the run's simulations were not queued"
    assert found == []


def test_on_a_phone_no_page_scrolls_sideways(fake_site, page_for, alice, problem):
    """At 390 px the header wraps and wide tables and grids scroll inside themselves (still passing axe,
    their scrolling regions reachable by keyboard), so the page itself never scrolls sideways."""
    page = page_for(fake_site, alice)
    page.goto(f"{fake_site}/problems/{problem.pk}/")
    solve(page, k=2, turns=0, real=True)
    wait_finished(page)
    wait_until(page, "document.querySelectorAll('[data-testid=execution-row]').length >= 3")
    run_url = page.url
    page.set_viewport_size({"width": 390, "height": 844})
    paths = (
        "/problems/",
        f"/problems/{problem.pk}/",
        "/runs/",
        "/simulate/",
        "/checkpoints/",
        "/problems/import/",
    )
    wide, found = [], []
    for url in (run_url, *(fake_site + path for path in paths)):
        page.goto(url)
        width = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        if width > 0:
            wide.append(f"{url}: {width} px too wide")
        found += violations(page)
    assert wide == [] and found == []
