"""The web app in Chromium, in production mode (daphne + a Celery worker subprocess, PostgreSQL, Redis,
the real pipeline and model client), against the fake model server (a test double of vLLM, scripted):
sign up, create a problem, solve and watch the run stream to the end; reload mid-run; cancel and retry;
the read-only share link logged out; run for real; model output with <script> shown as text; simulate
my code. Takes the screenshots of docs/screenshots/ (support.SCREENSHOTS).
"""

from __future__ import annotations

import pytest

from tests.webapp.browser.flows import (
    create_problem,
    screenshot,
    sign_up,
    solve,
    wait_finished,
    wait_status,
    wait_text,
    wait_until,
)
from tests.webapp.browser.support import RIGHT, add_one_script, add_one_value, nlex
from webapp.runs.models import Candidate, Run

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SLOW_PREAMBLE = "Let me think about this step by step before writing the program. " * 3
XSS = "<script>window.__xss=1</script>"


def _problem_page(page, base, problem) -> None:
    page.goto(f"{base}/problems/{problem.pk}/")


def test_sign_up_create_a_problem_solve_it_and_watch_the_run_finish(fake_site, fake_model, page_for):
    fake_model.responder = add_one_script(preamble=SLOW_PREAMBLE)
    fake_model.delay_s = 0.03
    page = page_for(fake_site)
    sign_up(page, fake_site, "dora")
    problem_url = create_problem(page, fake_site)
    page.goto(f"{fake_site}/problems/")
    assert page.locator('[data-testid="problem-row"]').count() == 1
    screenshot(page, "problem-list")

    page.goto(problem_url)
    run_url = solve(page, k=2, turns=1)
    wait_text(page, "#cand-1-text", min_chars=40)
    assert page.locator('[data-testid="run-status"]').get_attribute("data-status") in ("queued", "running")
    screenshot(page, "run-live")

    wait_finished(page)
    run = Run.objects.get()
    assert page.url == run_url and run.status == Run.FINISHED and run.user.username == "dora"
    # What streamed in equals what was recorded: no event lost, none applied twice.
    for cand in Candidate.objects.filter(run=run):
        assert page.locator(f"#cand-{cand.index}-text").text_content() == cand.text
    matrix = page.locator('[data-testid="verification-matrix"]')
    assert matrix.locator("#verdict-0-0").get_attribute("data-match") == "true"
    assert matrix.locator("#verdict-0-1").get_attribute("data-match") == "true"
    assert matrix.locator("#verdict-1-0").get_attribute("data-match") == "false"
    assert page.locator('[data-testid="selected-candidate"]').inner_text() == "0"
    assert "return x + 1" in page.locator('[data-testid="final-code"]').inner_text()
    assert page.locator('[data-testid="repair-submitted"]').count() == 1
    assert page.locator('[data-testid="cancel-run"]').count() == 0
    screenshot(page, "run-finished")

    page.goto(problem_url)
    assert "finished" in page.locator('[data-testid="past-runs"]').inner_text()
    screenshot(page, "problem-page")
    assert page.errors == []


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


def test_cancel_a_run_then_retry_it(fake_site, fake_model, page_for, alice, problem):
    fake_model.responder = add_one_script(preamble=SLOW_PREAMBLE * 4)
    fake_model.delay_s = 0.1  # far longer than the test waits: only the cancel ends it
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=2, turns=1)
    wait_text(page, "#cand-0-text", min_chars=20)

    page.click('[data-testid="cancel-run"]')
    assert wait_status(page, timeout_s=30) == "cancelled"
    run = Run.objects.get()
    assert run.status == Run.CANCELLED and run.events.last().type == "run_cancelled"
    assert page.locator('[data-testid="cancel-run"]').count() == 0

    fake_model.delay_s = 0.0
    page.click('[data-testid="retry-run"]')
    page.wait_for_url(lambda url: str(run.id) not in url and "/runs/" in url)
    wait_finished(page)
    retry = Run.objects.exclude(id=run.id).get()
    assert retry.retry_of_id == run.id and retry.settings == run.settings
    assert page.errors == []


def test_run_for_real_shows_real_results_and_the_simulation_gap(
    fake_site, fake_model, page_for, alice, problem
):
    def wrong_on_five(code: str, call: str) -> str:  # the model mis-simulates add_one(5) as 7
        value = add_one_value(code, call)
        return nlex(call, 7 if call == "add_one(5)" and value == 6 else value)

    fake_model.responder = add_one_script(simulate=wrong_on_five)
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=2, turns=1, real=True)
    wait_finished(page)

    # The final program on the two public tests and the private one (rows may still be arriving).
    wait_until(page, "document.querySelectorAll('[data-testid=execution-row]').length >= 3")
    statuses = page.locator('[data-testid="execution-status"]').all_inner_texts()
    assert set(statuses) == {"ok"}
    assert "private" in page.locator('[data-testid="executions"]').inner_text()
    divergence = page.locator("#exec-0-1 [data-testid='divergence']").inner_text()
    assert divergence.strip() not in ("", "—")
    cell = page.locator("#verdict-0-0").inner_text()
    assert "really:" in cell and "(ok, passes)" in cell
    assert page.errors == []


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


def test_simulate_my_code_next_to_the_real_execution(fake_site, fake_model, page_for, alice):
    fake_model.responder = add_one_script(
        simulate=lambda code, call: nlex(call, 7, thought="x is 3. x + 1 is 7, so add_one returns 7.")
    )
    page = page_for(fake_site, alice)
    page.goto(f"{fake_site}/simulate/")
    page.fill("#id_code", RIGHT.strip("`").removeprefix("python\n"))
    page.select_option("#id_mode", "call")
    page.fill("#id_code_input", "add_one(3)")
    screenshot(page, "simulate-form")
    page.click('[data-testid="simulate-submit"]')
    page.wait_for_url("**/runs/*/")
    wait_finished(page)

    assert page.locator('[data-testid="simulate-input"]').count() == 1
    # A pasted program has no expected outputs: no matrix, selection, repairs or final program.
    assert page.locator('[data-testid="verification-matrix"], [data-testid="selected"]').count() == 0
    assert page.locator('[data-testid="final"]').count() == 0
    assert "x + 1 is 7" in page.locator("#sim-0-0-0-text").text_content()
    assert page.locator('[data-testid="predicted"]').first.inner_text() == "7"
    assert page.locator('[data-testid="execution-status"]').first.inner_text() == "ok"
    screenshot(page, "simulate-result")
    assert page.errors == []


def test_the_run_for_real_button_on_a_finished_run(fake_site, fake_model, page_for, alice, problem):
    fake_model.responder = add_one_script()
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=2, turns=1, real=False)
    wait_finished(page)
    assert page.locator('[data-testid="execution-row"]').count() == 0

    page.click('[data-testid="run-real"]')
    # Every candidate and the final program, each on the two public tests and the private one.
    page.wait_for_selector('[data-testid="real-summary-row"]', timeout=60_000)
    wait_until(page, "document.querySelectorAll('[data-testid=execution-row]').length >= 6")
    rows = page.locator('[data-testid="real-summary-row"]')
    right = page.locator('[data-testid="real-summary-row"][data-candidate="0"]').first.inner_text()
    wrong = page.locator('[data-testid="real-summary-row"][data-candidate="1"]').first.inner_text()
    assert rows.count() >= 2 and "2 / 2" in right and "1 / 1" in right
    assert "0 / 2" in wrong
    assert page.locator('[data-testid="run-real"]').count() == 1  # offered again once it is done
    assert page.errors == []
