"""The web app in Chromium, in production mode (daphne + a Celery worker subprocess, PostgreSQL, Redis,
the real pipeline and model client), against the fake model server (a test double of vLLM, scripted):
a reload in the middle of a run and the read-only share link watching it live; model output with
<script> shown as text; a reply cut by its token budget flagged. What depends on the mode (streaming,
the header's counts, repair turns, Run for real, Simulate my code, cancel) is in test_both_modes.py.
"""

from __future__ import annotations

import pytest

from tests.webapp.browser.flows import solve, wait_finished, wait_status, wait_text, wait_until
from tests.webapp.browser.support import RIGHT, SLOW_PREAMBLE, WRONG, add_one_script, add_one_value, nlex
from webapp.runs.models import Candidate, Run

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

XSS = "<script>window.__xss=1</script>"


def _problem_page(page, base, problem) -> None:
    page.goto(f"{base}/problems/{problem.pk}/")


def test_a_reload_in_the_middle_of_a_run_continues_where_it_was(
    fake_site, fake_model, page_for, alice, problem
):
    fake_model.responder = add_one_script(preamble=SLOW_PREAMBLE * 2)
    fake_model.delay_s = 0.08  # ~100 chunks for the two candidates: several seconds of streaming
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=2, turns=1)
    before = wait_text(page, "#cand-0-text", min_chars=40)
    assert wait_status(page, ("running",)) == "running"

    page.reload()
    after = page.locator("#cand-0-text").text_content()
    assert after.startswith(before[:40]) and len(after) >= len(before)
    assert page.locator('[data-testid="run-status"]').get_attribute("data-status") == "running"
    wait_text(page, "#cand-0-text", min_chars=len(after) + 20)  # still streaming after the reload

    # Meanwhile a logged-out visitor with the share link watches it live too.
    run = Run.objects.get()
    visitor = page_for(fake_site)
    visitor.goto(f"{fake_site}/share/{run.share_token}/")
    assert visitor.locator('[data-testid="readonly-note"]').is_visible()

    wait_finished(page)
    assert wait_status(visitor) == "finished"
    for cand in Candidate.objects.filter(run=run):
        assert page.locator(f"#cand-{cand.index}-text").text_content() == cand.text
        assert visitor.locator(f"#cand-{cand.index}-text").text_content() == cand.text
    assert visitor.locator('[data-testid="cancel-run"], [data-testid="retry-run"]').count() == 0
    assert visitor.locator('[data-testid="nav-login"]').is_visible()  # really logged out
    assert page.errors == [] and visitor.errors == []


def test_model_output_with_a_script_tag_is_shown_as_text(fake_site, fake_model, page_for, alice, problem):
    code = f"```python\n# {XSS}\ndef add_one(x):\n    # {XSS}\n    return x + 1\n```"
    fake_model.responder = add_one_script(
        solve=[code, code],
        simulate=lambda code, call: nlex(call, XSS, thought=f"{XSS} it returns a script tag"),
    )
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=2, turns=0)
    wait_finished(page)

    for view in (page, None):
        if view is None:  # the same run rendered from the database, and its share link
            page.reload()
            view = page
        assert view.evaluate("typeof window.__xss") == "undefined"
        assert view.locator("#run script").count() == 0
        assert XSS in view.locator("#cand-0-text").text_content()
        assert XSS in view.locator("#cand-0-code").inner_text()
        assert XSS in view.locator("#sim-0-0-0-text").text_content()
        assert XSS in view.locator("#verdict-0-0").inner_text()
        assert XSS in view.locator('[data-testid="final-code"]').inner_text()
    share = page_for(fake_site)
    share.goto(f"{fake_site}/share/{Run.objects.get().share_token}/")
    assert share.evaluate("typeof window.__xss") == "undefined"
    assert XSS in share.locator("#cand-1-text").text_content()
    assert page.errors == [] and share.errors == []


def test_a_reply_cut_by_its_token_budget_is_flagged(fake_site, fake_model, page_for, alice, problem):
    long = RIGHT.replace("x + 1", "x + 1  # " + "and that is all there is to it, " * 4)
    fake_model.responder = add_one_script(
        solve=[RIGHT, long], simulate=lambda code, call: nlex(call, add_one_value(code, call), thought="t")
    )
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=2, turns=0, max_tokens=16)  # 16 chunks of 4 characters: the long reply is cut
    wait_finished(page)
    flag = page.locator('#cand-1-code [data-testid="candidate-budget"]')
    assert "used its whole token budget" in flag.inner_text() and "parsed all the same" in flag.inner_text()
    assert page.locator('#cand-0-code [data-testid="candidate-budget"]').count() == 0
    assert page.errors == [] and page.console_errors == []


def test_a_run_with_the_defaults_streams_nlex_checked_claim_by_claim_and_queues_narrations(
    fake_site, fake_model, page_for, alice, problem, annotator_user
):
    """The product's own experience with nothing changed in the form: each simulation streams in as the
    model's narration of the run (NLEX), then its claims are checked against the real run; the finished
    run's narrations reach the annotation queue."""
    from webapp.annotation.models import AnnotationItem

    thought = "Line 1: add_one is called with x = {x}. Line 2: x + 1 is {value}, which it returns."

    def narrated(code: str, call: str) -> str:
        x = call[len("add_one(") : -1]
        value = add_one_value(code, call)
        return nlex(call, value, thought=thought.format(x=x, value=value) + " " + SLOW_PREAMBLE)

    fake_model.responder = add_one_script(solve=[RIGHT, WRONG, RIGHT, WRONG], simulate=narrated)  # k=4
    fake_model.delay_s = 0.02  # a few seconds of streaming per simulation
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    assert page.locator("#id_narrate").is_checked()  # the default
    page.click('[data-testid="solve-submit"]')  # nothing changed in the form
    page.wait_for_url("**/runs/*/")

    live = wait_text(page, "#sim-0-0-0-text", min_chars=20)  # streaming: the narration so far
    assert "Line 1: add_one is called" in live or live.startswith("[THOUGHT]")
    assert "simulated execution (NLEX)" in page.locator("#sim-0-0-0").inner_text()
    wait_finished(page)
    text = page.locator("#sim-0-0-0-text")
    assert "x + 1 is 2, which it returns" in text.inner_text()
    claims = text.locator('[data-testid="claim"]')
    wait_until(page, "document.querySelectorAll('#sim-0-0-0-text [data-testid=claim]').length > 0")
    assert "true" in {claims.nth(i).get_attribute("data-verdict") for i in range(claims.count())}

    run = Run.objects.get()
    assert run.settings["narrate"] is True
    items = AnnotationItem.objects.filter(simulation__run=run)
    assert items.exists() and all(item.narrated for item in items)
    annotator = page_for(fake_site, annotator_user)
    annotator.goto(f"{fake_site}/annotation/")
    rows = annotator.locator('[data-testid="queue-item"]').all_inner_texts()
    assert rows and all("narration" in row for row in rows)
    assert page.errors == [] and annotator.errors == []
