"""What depends on the mode, in Chromium against each mode's site (``site``: production, daphne + a
Celery worker + PostgreSQL + Redis; embedded, ``execsim up`` with SQLite and the in-process runner),
both talking to the fake model server (a test double of vLLM, scripted): a run streams live and the
header's queued/running counts follow it to its end; repair turns say what they did as they happen;
Run for real's rows arrive in the page's order, each matrix cell then says what really came out and
each program gets a judge's verdict, live as on a reload; Simulate my code, on its own and against a
problem; cancel and retry.

Users, problems and runs live in the site's own database, so every test signs up and creates its
problem through the page, and reads a run back through its Export JSON. The production site takes
the screenshots of docs/screenshots/ (support.SCREENSHOTS).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.webapp.browser.flows import (
    create_problem,
    header_counts,
    recorded_text,
    run_export,
    screenshot,
    sign_up,
    solve,
    wait_finished,
    wait_header_counts,
    wait_status,
    wait_text,
    wait_until,
)
from tests.webapp.browser.support import RIGHT, SLOW_PREAMBLE, WRONG, add_one_script, add_one_value, nlex

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

FIX = "```python\ndef add_one(x):\n    return 1 + x\n```"  # a repair that changes the program
NO_PROGRAM = "I would leave the program as it is."  # a repair reply without a program
MISNAMED = "```python\ndef add_two(x):\n    return x + 1\n```"  # never defines add_one: known to fail
PRIVATE_WRONG = "```python\ndef add_one(x):\n    if x < 0:\n        return None\n    return x + 1\n```"
RAISES = "```python\ndef add_one(x):\n    y = None\n    return x + y\n```"


# The ids of the "…" cells (a verdict still to come) that are shown.
PENDING_SHOWN = (
    "Array.from(document.querySelectorAll('#run .cell[data-match=\"\"]'))"
    ".filter(e => e.getClientRects().length).map(e => e.id)"
)


def _shot(site: Any, page: Any, name: str) -> None:
    """docs/screenshots/ shows the production site (one picture per flow, not one per mode)."""
    if site.mode == "production":
        screenshot(page, name)


def _row_ids(page: Any) -> list[str]:
    return page.evaluate("Array.from(document.querySelectorAll('[data-testid=execution-row]'), r => r.id)")


def _in_page_order(*programs: str) -> list[str]:
    """Row ids of ``programs`` ("0", "0-t1") on the Add one tests: public ones (1, 5) first, then -1."""
    return [f"exec-{p}-{t}" for p in programs for t in (0, 1, 2)]


def _assert_clean(page: Any) -> None:
    assert page.errors == [] and page.console_errors == []


def test_a_run_streams_says_what_each_repair_turn_did_and_the_header_counts_it(site, fake_model, page_for):
    fake_model.responder = add_one_script(
        solve=[WRONG, MISNAMED], preamble=SLOW_PREAMBLE, repair=[NO_PROGRAM, FIX]
    )
    fake_model.delay_s = 0.03
    page = page_for(site)
    sign_up(page, site, "dora")
    problem_url = create_problem(page, site)
    page.goto(f"{site}/problems/")
    assert any(
        row.startswith("Add one") for row in page.locator('[data-testid="problem-row"]').all_inner_texts()
    )
    _shot(site, page, "problem-list")

    page.goto(problem_url)
    run_url = solve(page, k=2, turns=3)  # narrated (the default), sampled: a turn without a fix asks again
    wait_text(page, "#cand-1-text", min_chars=40)
    assert page.locator('[data-testid="run-status"]').get_attribute("data-status") in ("queued", "running")
    wait_until(page, "/\\d+ queued/.test(document.getElementById('model-status').textContent)")
    assert sum(header_counts(page)) == 1  # this run, queued or running
    _shot(site, page, "run-live")

    wait_finished(page)
    # The header is told when the run ends (not at its next 10 s poll): nothing queued or running.
    wait_header_counts(page, (0, 0), timeout_s=8)
    export = run_export(page, run_url)
    assert export["status"] == "finished" and export["settings"]["turns"] == 3
    for c in (0, 1):  # what streamed in equals what was recorded: no event lost, none applied twice
        assert page.locator(f"#cand-{c}-text").text_content() == recorded_text(export, c)
    matrix = page.locator('[data-testid="verification-matrix"]')
    assert [
        matrix.locator(f"#verdict-{c}-{t}").get_attribute("data-match") for c, t in ((0, 0), (0, 1), (1, 0))
    ] == [
        "false",
        "false",
        "false",
    ]
    assert "…" not in matrix.inner_text()  # every cell filled in
    # a tie at no match: the misnamed program is known to fail, so the other is picked
    assert page.locator('[data-testid="selected-candidate"]').inner_text() == "0"
    # Each repair turn says, live, what happened: a turn whose replies hold no program (asked again:
    # sampled), a fix (its diff), a program submitted without asking; no "…" left waiting for a
    # simulation that will not come.
    no_program = page.locator('#repair-1-body [data-testid="repair-no-program"]')
    assert no_program.is_visible() and no_program.inner_text().startswith("No program in the reply")
    assert "the program stays as it was" in no_program.inner_text()
    assert "Diff against the previous program" in page.locator("#repair-2-body").inner_text()
    assert "1 + x" in page.locator("#repair-2-body").inner_text()
    submitted = page.locator('#repair-3-body [data-testid="repair-submitted-unasked"]')
    assert submitted.is_visible() and "without asking the model" in submitted.inner_text()
    assert page.evaluate(PENDING_SHOWN) == []
    assert "return 1 + x" in page.locator('[data-testid="final-code"]').inner_text()  # turn 2's program
    assert page.locator('[data-testid="cancel-run"]').count() == 0
    _shot(site, page, "run-finished")

    # Run for real: the candidates and the repaired final program; rows arrive in the page's order
    # (program, public tests first, test), the order a reload shows.
    page.click('[data-testid="run-real"]')
    page.wait_for_selector('[data-testid="real-summary"]', timeout=60_000)
    live = _row_ids(page)
    assert live == _in_page_order("0", "0-t2", "1")
    assert (
        page.locator('[data-testid="final-judgement"]').inner_text() == "Accepted 3/3 (2 public, 1 private)"
    )
    # Every cell now also says what really came out (the repaired program's too), and nothing still
    # says the run for real is under way once it is done.
    cells = page.locator('#run [data-testid="verdict-cell"]:not([data-match=""])')  # a verdict each
    live_cells = cells.all_inner_texts()
    assert len(live_cells) >= 4 and all("really:" in c for c in live_cells)
    assert "expected 2" in page.locator("#verdict-0-0").inner_text()
    assert "really: 3 (ok, fails)" in page.locator("#verdict-0-0").inner_text()
    assert "really: 2 (ok, passes)" in page.locator("#rverdict-2-0").inner_text()
    assert page.locator('[data-testid="run-real-pending"]').count() == 0
    assert not any("for real" in m for m in page.locator('[data-testid="messages"]').all_inner_texts())
    page.reload()
    assert _row_ids(page) == live
    assert cells.all_inner_texts() == live_cells
    _assert_clean(page)

    page.goto(problem_url)
    assert "finished" in page.locator('[data-testid="past-runs"]').inner_text()
    _shot(site, page, "problem-page")
    page.click('[data-testid="model-status"]')  # the header's link: a page of its own, styled
    page.wait_for_selector('[data-testid="model-status-page"]')
    assert page.evaluate("getComputedStyle(document.querySelector('header.top')).display") == "flex"
    assert "0 queued, 0 running" in page.locator('[data-testid="model-status-page"]').inner_text()
    _assert_clean(page)


def _simulate_verdicts(code: str, call: str) -> str:
    """Faithful, except that add_one(5) of the right program is said to be 7 (it is 6), and a program
    that raises is said to return None."""
    try:
        value = add_one_value(code, call)
    except TypeError:
        return nlex(call, None, thought="x + y adds None to x.")
    if call == "add_one(5)" and "if" not in code:
        value = 7
    return nlex(call, value)


def test_run_for_real_gives_each_program_a_judges_verdict(site, fake_model, page_for):
    fake_model.responder = add_one_script(solve=[RIGHT, PRIVATE_WRONG, RAISES], simulate=_simulate_verdicts)
    page = page_for(site)
    sign_up(page, site, "jude")
    page.goto(create_problem(page, site))
    run_url = solve(page, k=3, turns=0, real=True)
    wait_finished(page)

    # The simulations chose #1 (right on both public tests, as simulated); the real run says it fails.
    assert page.locator('[data-testid="selected-candidate"]').inner_text() == "1"
    result = page.locator('[data-testid="final-judgement"]')
    wait_until(page, "document.querySelector('[data-testid=final-judgement]') !== null")
    assert result.get_attribute("data-verdict") == "wrong_answer"
    assert result.inner_text() == "Wrong answer on test 3: expected 0, got None (2/3 passed)"
    # Each matrix cell in words: what was simulated, what was expected, what really came out.
    cell = page.locator("#verdict-0-1").inner_text()
    assert "simulated 7, expected 6" in cell and "really: 6 (ok, passes)" in cell
    assert "really:" in page.locator("#verdict-2-0").inner_text()
    assert "(runtime_error, fails)" in page.locator("#verdict-2-0").inner_text()
    # The run executed its final program itself: the panel's banner came with the run's end, live.
    banner = page.locator('[data-testid="judgement"]')
    assert banner.all_inner_texts() == ["#1: Wrong answer on test 3: expected 0, got None (2/3 passed)"]

    page.click('[data-testid="run-real"]')
    page.wait_for_selector('[data-testid="real-summary"]', timeout=60_000)
    assert _row_ids(page) == _in_page_order("0", "1", "2")
    banners = {
        b.get_attribute("data-candidate"): b.inner_text()
        for b in page.locator('[data-testid="judgement"]').all()
    }
    assert banners["0"] == "#0: Accepted 3/3 (2 public, 1 private)"
    assert banners["1"] == "#1: Wrong answer on test 3: expected 0, got None (2/3 passed)"
    assert banners["2"].startswith("#2: Runtime error on test 1: TypeError: unsupported operand")
    assert banners["2"].endswith("(line 3) (0/3 passed)")
    # What each program cost, as a judge says: its private test ran without the tracer, so its time is
    # the one reported; each row its own, the public ones marked traced.
    spent = page.locator('[data-testid="judgement-cost"][data-candidate="0"]').inner_text()
    assert re.fullmatch(r"Slowest test \d+ ms · peak memory \d+\.\d MB", spent), spent
    costs = page.locator("#exec-0-0 [data-testid='execution-cost'], #exec-0-2 [data-testid='execution-cost']")
    assert re.fullmatch(r"\d+ ms \(traced\) · \d+\.\d MB", costs.nth(0).inner_text())
    assert re.fullmatch(r"\d+ ms · \d+\.\d MB", costs.nth(1).inner_text())
    expected = page.locator('[data-testid="execution-expected"]').all_inner_texts()
    assert expected[:3] == ["2", "6", "0"]  # an expected-output column; the owner sees the private one
    row = page.locator("#exec-0-1 [data-testid='verification']")
    assert row.get_attribute("data-label") == "diverges"
    summary = {
        r.get_attribute("data-candidate"): r.inner_text()
        for r in page.locator('[data-testid="real-summary-row"]').all()
    }
    assert "2 / 2" in summary["0"] and "1 / 1" in summary["0"] and "0 / 2" in summary["2"]
    # every program ran for real: not offered again (issue 52)
    assert page.locator('[data-testid="run-real"]').count() == 0
    _shot(site, page, "run-verdicts")
    _assert_clean(page)

    # The share link, logged out: the same verdicts, the private test named but never shown, and the
    # provenance says what was run, not where (no model server address, no local folder).
    owner_provenance = page.locator('[data-testid="provenance-table"]').inner_text()
    assert fake_model.url in owner_provenance
    token = page.locator('[data-testid="share-link"]').get_attribute("href")
    visitor = page_for(site)
    visitor.goto(f"{site}{token}")
    assert visitor.locator('[data-testid="readonly-note"]').is_visible()
    shared = visitor.locator('[data-testid="judgement"][data-candidate="1"]').inner_text()
    assert shared == "#1: Failed on test 3 (a private test) (2/3 passed)"  # how it failed: not shown
    assert "(private)" in visitor.locator("#exec-1-2").inner_text()
    provenance = visitor.locator('[data-testid="provenance-table"]').inner_text()
    assert "Seed" in provenance and fake_model.url not in provenance and "/fake/" not in provenance
    export = visitor.locator('[data-testid="export-json"]').get_attribute("href")
    response = visitor.request.get(f"{site}{export}")
    assert response.ok and fake_model.url not in response.text() and "/fake/" not in response.text()
    assert run_export(page, run_url)["provenance"]["server"] == fake_model.url
    _assert_clean(visitor)


def test_simulate_my_code_on_its_own_and_against_a_problem(site, fake_model, page_for):
    fake_model.responder = add_one_script(
        simulate=lambda code, call: nlex(
            call,
            7 if call in ("add_one(3)", "add_one(5)") else add_one_value(code, call),
            thought="x + 1 is 7.",
        )
    )
    page = page_for(site)
    sign_up(page, site, "sim")
    program = RIGHT.strip("`").removeprefix("python\n")

    page.goto(f"{site}/simulate/")
    page.fill("#id_code", program)
    page.select_option("#id_mode", "call")
    page.fill("#id_code_input", "add_one(3)")
    _shot(site, page, "simulate-form")
    page.click('[data-testid="simulate-submit"]')
    page.wait_for_url("**/runs/*/")
    wait_finished(page)
    assert page.locator('[data-testid="simulate-input"]').count() == 1
    # A pasted program has no expected outputs: no matrix, selection, repairs or final program.
    assert page.locator('[data-testid="verification-matrix"], [data-testid="selected"]').count() == 0
    assert page.locator('[data-testid="final"]').count() == 0
    heading = page.locator('[data-testid="candidates-heading"]').inner_text()
    assert heading == "Your program, as the model simulates it"
    assert page.locator("#cand-0 header").inner_text().startswith("Your program")  # not "Candidate 0"
    # the one card takes the width a grid of k cards shares (it was a third, its narration cramped)
    card, area = (page.locator(s).bounding_box()["width"] for s in ("#cand-0", "#candidates"))
    assert card > 0.95 * area, (card, area)
    assert "x + 1 is 7" in page.locator("#sim-0-0-0-text").text_content()
    assert page.locator('[data-testid="predicted"]').first.inner_text() == "7"
    assert page.locator('[data-testid="execution-status"]').first.inner_text() == "ok"
    head = page.locator("#executions .xrow.head span").all_inner_texts()
    assert head[4:8] == ["output as simulated", "time · memory", "simulated", "output"]  # no expected one
    cost = page.locator("#exec-0-0 [data-testid='execution-cost']").inner_text()
    assert re.fullmatch(r"\d+ ms \(traced\) · \d+\.\d MB", cost), cost  # traced: its simulation is checked
    assert page.locator("#exec-0-0 [data-testid='execution-expected']").inner_text() == "7"
    # Its claims coloured by verdict, as in the explorer, with links to their steps in the trace.
    claims = page.locator('#sim-0-0-0-text [data-testid="claim"]')
    assert claims.count() >= 1 and "7" in claims.all_inner_texts()
    _shot(site, page, "simulate-result")
    _assert_clean(page)

    # Against a problem: simulated and run on its public tests, judged on all, at a chosen budget.
    create_problem(page, site)
    page.goto(f"{site}/simulate/")
    page.fill("#id_code", program)
    page.select_option("#id_problem", label="Add one")
    page.fill("#id_max_tokens", "64")
    page.click('[data-testid="simulate-submit"]')
    page.wait_for_url("**/runs/*/")
    run_url = page.url
    wait_finished(page)
    assert page.locator('[data-testid="run-problem"]').inner_text() == "Add one"
    assert page.locator("#cand-0 header").inner_text().startswith("Your program")
    wait_until(page, "document.querySelectorAll('[data-testid=execution-row]').length >= 3")
    assert (
        page.locator('[data-testid="final-judgement"]').inner_text() == "Accepted 3/3 (2 public, 1 private)"
    )
    assert page.locator("#verdict-0-1").get_attribute("data-match") == "false"  # simulated 7, expected 6
    # The verdict also heads the page, as a judge shows it; the user's program is never repaired and
    # cost no tokens, so neither is mentioned.
    headline = page.locator('[data-testid="run-status"] [data-testid="status-judgement"]')
    assert headline.inner_text() == "Accepted 3/3 (2 public, 1 private) · the final program"
    assert page.locator("h2", has_text="Repair turns").count() == 0
    assert page.locator('[data-testid="repair-off"]').count() == 0
    assert "tokens" not in page.locator("#cand-0-code").inner_text()
    badge = page.locator("#cand-0-badge").inner_text()
    assert badge.startswith("predicted 1 of 2 public tests") and "selected" not in badge  # nothing was picked
    judged = page.locator(
        '[data-testid="selected"]'
    )  # one program: nothing picked, what the model made of it
    assert judged.locator("h2").inner_text() == "The model's judgement of your program"
    assert judged.locator('[data-testid="selected-candidate"]').count() == 0
    assert "matched 1 of 2 public tests" in judged.locator('[data-testid="selected-reason"]').inner_text()
    assert run_export(page, run_url)["settings"]["max_tokens"] == 64
    # The Run for real panel shows the same verdict, live and after a reload; so do the claims.
    assert page.locator('[data-testid="judgement"]').inner_text() == "#0: Accepted 3/3 (2 public, 1 private)"
    wrong = page.locator('#sim-0-1-0-text [data-testid="claim"][data-verdict="false"]')
    assert wrong.first.inner_text() == "7"
    linked = page.locator('#sim-0-1-0-text a[data-testid="claim"]')
    assert linked.count() >= 1 and "/explorer/runs/" in linked.first.get_attribute("href")
    live_claims = page.locator("#sim-0-1-0-text").inner_html()
    _assert_clean(page)
    page.reload()
    assert page.locator('[data-testid="judgement"]').inner_text() == "#0: Accepted 3/3 (2 public, 1 private)"
    assert page.locator("#sim-0-1-0-text").inner_html() == live_claims
    # Where the simulation went wrong, and the link to that step of the trace, its claims coloured.
    verdict = page.locator("#exec-0-1 [data-testid='verification']")
    assert verdict.get_attribute("data-label") == "diverges"
    verdict.locator('[data-testid="verification-link"]').click()
    page.click('[data-testid="explore-asked-open"]')
    page.wait_for_url(re.compile(r".*/explorer/t/[^/]+/#step-\d+$"))
    assert page.locator('[data-testid="ex-model"] .claim-false').first.inner_text() == "7"
    _assert_clean(page)


def test_cancel_a_run_then_retry_it(site, fake_model, page_for):
    fake_model.responder = add_one_script(preamble=SLOW_PREAMBLE * 4)
    fake_model.delay_s = 0.1  # far longer than the test waits: only the cancel ends it
    page = page_for(site)
    sign_up(page, site, "cato")
    page.goto(create_problem(page, site))
    run_url = solve(page, k=2, turns=1)
    wait_text(page, "#cand-0-text", min_chars=20)

    page.click('[data-testid="cancel-run"]')
    assert wait_status(page, timeout_s=30) == "cancelled"
    assert page.locator('[data-testid="cancel-run"]').count() == 0
    wait_header_counts(page, (0, 0), timeout_s=8)
    cancelled = run_export(page, run_url)
    assert cancelled["status"] == "cancelled" and cancelled["events"][-1]["type"] == "run_cancelled"

    fake_model.delay_s = 0.0
    page.click('[data-testid="retry-run"]')
    page.wait_for_url(lambda url: url != run_url and "/runs/" in url)
    wait_finished(page)
    retry = run_export(page, page.url)
    assert retry["settings"] == cancelled["settings"]
    earlier = page.locator('[data-testid="run-status"] a', has_text="an earlier run")
    assert earlier.get_attribute("href") == run_url.removeprefix(site)
    _assert_clean(page)
