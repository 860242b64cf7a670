"""The problem list in a browser: search as you type and the source select narrow the list in place
(htmx swaps the results; the address keeps the filter, so Back and a reload show the same list), the
page links keep both, and without JavaScript the Filter button does the same."""

from __future__ import annotations

import pytest

from tests.webapp.browser.flows import wait_until
from webapp.pages import PAGE_SIZE
from webapp.problems.models import Problem

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROWS = "document.querySelectorAll('[data-testid=problem-row]').length"


@pytest.fixture
def imported(alice):
    """A benchmark's worth of problems beside one made in the editor."""
    Problem.objects.bulk_create(
        Problem(title=f"MBPP {i}: task", statement="s", owner=alice, source="mbpp", is_public=True)
        for i in range(PAGE_SIZE + 5)
    )
    Problem.objects.create(title="Handmade", statement="s", owner=alice, source="manual", is_public=True)


def test_search_and_source_narrow_the_list_in_place_and_the_pages_keep_them(
    fake_site, page_for, chromium, imported
):
    page = page_for(fake_site)
    page.goto(f"{fake_site}/problems/")
    page.evaluate("window.marker = 1")  # gone if the page reloads instead of swapping its results
    page.select_option('[data-testid="problem-source"]', "manual")
    wait_until(page, f"{ROWS} === 1")
    assert page.locator('[data-testid="problem-row"]').inner_text().startswith("Handmade")
    assert page.url.endswith("/problems/?source=manual") and page.evaluate("window.marker") == 1
    page.select_option('[data-testid="problem-source"]', "mbpp")
    page.fill('[data-testid="problem-search"]', "MBPP 1")  # MBPP 1, 10-19: 11 of them
    wait_until(page, f"{ROWS} === 11")
    page.select_option('[data-testid="problem-source"]', "")
    page.fill('[data-testid="problem-search"]', "")
    wait_until(page, f"{ROWS} === {PAGE_SIZE}")
    page.select_option('[data-testid="problem-source"]', "mbpp")
    wait_until(page, "document.querySelector('[data-testid=pages]')?.textContent.includes('of 55')")
    page.click('[data-testid="page-next"]')
    wait_until(page, f"{ROWS} === 5")
    assert page.url.endswith("/problems/?source=mbpp&page=2") and page.evaluate("window.marker") == 1
    page.reload()
    assert page.locator('[data-testid="problem-row"]').count() == 5
    assert page.locator('[data-testid="problem-source"]').input_value() == "mbpp"

    context = chromium.new_context(java_script_enabled=False)
    try:
        plain = context.new_page()
        plain.goto(f"{fake_site}/problems/")
        plain.select_option('[data-testid="problem-source"]', "manual")
        plain.click('[data-testid="problem-filters"] button[type="submit"]')
        plain.wait_for_url("**source=manual**")
        assert plain.locator('[data-testid="problem-row"]').count() == 1
    finally:
        context.close()
