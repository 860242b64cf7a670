"""The run page as a newcomer reads it (issue 52, the Developer's run-page items), in Chromium against
the fake model server (a test double of vLLM, scripted):

- colours mean one thing each: a mark for "the program passes (really)", another for "the simulation
  agrees with the real run", a prediction marked as one, with a legend; a simulated failure the real
  run contradicts is flagged, in the matrix and in repair turns;
- Run for real keeps the reader's place, shows its progress where its results arrive, and is not
  offered again for programs that already ran for real (both modes);
- an ended run (cancelled, or failed because the model is down) says so everywhere: no "Cancelling",
  no stage "started", no "Running…" result, the header's counts back to none (both modes);
- identical candidates are one card with a count, and the selection does not call picking among
  copies of one program a random draw;
- a repair reply shows no raw code fence, and a repair that only renames a variable says so;
- seconds read as a person reads them, and the simulate stage's tokens are filled in.

What depends on the mode (live updates, the header's counts) runs on ``site`` (production and
embedded); pure rendering on ``fake_site`` (production).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from simulator.llm.testing import ScriptedFailure
from tests.webapp.browser.flows import (
    create_problem,
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

FIX = "```python\ndef add_one(x):\n    return 1 + x\n```"  # right, written another way
RENAMED = "```python\ndef add_one(y):\n    return y + 2\n```"  # WRONG with its variable renamed
RED, GREEN = "rgb(255, 235, 233)", "rgb(218, 251, 225)"  # the matrix's old match / mismatch colours


def _assert_clean(page: Any) -> None:
    assert page.errors == [] and page.console_errors == []


def _problem_page(page: Any, base: str, problem: Any) -> None:
    page.goto(f"{base}/problems/{problem.pk}/")


def _background(page: Any, selector: str) -> str:
    return page.evaluate("s => getComputedStyle(document.querySelector(s)).backgroundColor", selector)


def _marks(page: Any, selector: str) -> dict[str, str | None]:
    """A verdict cell's marks: what the simulation predicted, whether the program really passes, and
    whether the simulation agrees with the real run (None: the mark is not there)."""
    cell = page.locator(selector)

    def attr(testid: str, name: str) -> str | None:
        mark = cell.locator(f'[data-testid="{testid}"]')
        return mark.get_attribute(name) if mark.count() else None

    return {
        "predicted": attr("mark-predicted", "data-predicted"),
        "passes": attr("mark-real", "data-passes"),
        "agrees": attr("mark-sim", "data-agrees"),
    }


# -- Colours mean two things ------------------------------------------------------------------------


def _lying(code: str, call: str) -> str:
    """The wrong program (x + 2) simulated as if it were right (its cells match the expected output, yet
    it fails); the right one (x + 1) simulated wrong on add_one(5) (said 7: a failure that is not)."""
    value = add_one_value(code, call)
    if "x + 2" in code:
        value -= 1
    elif call == "add_one(5)":
        value = 7
    return nlex(call, value)


def test_the_matrix_cards_and_result_mark_passing_apart_from_the_simulation_agreeing(
    fake_site, fake_model, page_for, alice, problem
):
    fake_model.responder = add_one_script(solve=[WRONG, RIGHT], simulate=_lying)
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=2, turns=0, real=True)
    wait_finished(page)
    # the simulations pick the wrong program (it "matched" both tests); the final program ran for real
    assert page.locator('[data-testid="selected-candidate"]').inner_text() == "0"
    wait_until(page, "document.querySelector('[data-testid=final-judgement]') !== null")

    legend = page.locator('[data-testid="matrix-legend"]')
    assert legend.is_visible()
    assert "passes" in legend.inner_text() and "agrees" in legend.inner_text()
    # The wrong program on test 1: predicted to pass, really fails, the simulation wrong. Not green.
    assert _marks(page, "#verdict-0-0") == {"predicted": "pass", "passes": "false", "agrees": "false"}
    assert _background(page, "#verdict-0-0") != GREEN
    # The right program on test 2 (each candidate ran on the public tests with its simulations):
    # simulated to fail, really passes; the failure is flagged as not real. Not red.
    assert _marks(page, "#verdict-1-1") == {"predicted": "fail", "passes": "true", "agrees": "false"}
    assert page.locator('#verdict-1-1 [data-testid="contradicted"]').is_visible()
    assert _background(page, "#verdict-1-1") != RED
    assert _marks(page, "#verdict-1-0") == {"predicted": "pass", "passes": "true", "agrees": "true"}
    assert page.locator('#verdict-1-0 [data-testid="contradicted"]').count() == 0
    # The selected card is framed as selected, not as passing, and says that its program fails.
    card = page.locator("#cand-0")
    border = page.evaluate("getComputedStyle(document.querySelector('#cand-0')).borderColor")
    assert border != "rgb(26, 127, 55)"  # the old frame: the colour of "accepted"
    assert card.locator('[data-testid="card-real"]').get_attribute("data-passes") == "false"
    # The Result box: the simulation's prediction apart from the judge's verdict, the disagreement said.
    prediction = page.locator('[data-testid="final-prediction"]')
    assert "predicted" in prediction.inner_text() and "the real run" in prediction.inner_text()
    assert prediction.get_attribute("data-agrees") == "false"
    # Run for real is offered only for the program that has not run for real on every test yet.
    offer = page.locator('[data-testid="run-real"]')
    assert offer.count() == 1 and "#1" in page.locator('[data-testid="run-real-what"]').inner_text()
    assert "#0" not in page.locator('[data-testid="run-real-what"]').inner_text()

    offer.click()
    page.wait_for_selector('[data-testid="real-summary"]', timeout=60_000)
    wait_until(page, "document.querySelector('#cand-1 [data-testid=card-real]') !== null")
    assert page.locator("#cand-1 [data-testid='card-real']").get_attribute("data-passes") == "true"
    assert page.locator('#verdict-1-1 [data-testid="contradicted"]').is_visible()
    live = page.locator('[data-testid="verification-matrix"]').inner_html()
    page.reload()
    assert page.locator('[data-testid="verification-matrix"]').inner_html() == live
    _assert_clean(page)


def _fix_said_wrong(code: str, call: str) -> str:
    """Faithful, except that the repaired program (1 + x) is said to give 7 for add_one(5)."""
    value = add_one_value(code, call)
    return nlex(call, 7 if "1 + x" in code and call == "add_one(5)" else value)


def test_a_repair_turn_flags_a_simulated_failure_the_real_run_contradicts(
    fake_site, fake_model, page_for, alice, problem
):
    fake_model.responder = add_one_script(solve=[WRONG], simulate=_fix_said_wrong, repair=[FIX])
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=1, turns=1, real=True)
    wait_finished(page)
    assert "1 + x" in page.locator('[data-testid="final-code"]').inner_text()  # the fix was kept
    wait_until(page, "document.querySelector('#rverdict-1-1 [data-testid=mark-real]') !== null")
    assert _marks(page, "#rverdict-1-1") == {"predicted": "fail", "passes": "true", "agrees": "false"}
    flag = page.locator('#repair-1 [data-testid="contradicted"]')
    assert flag.count() >= 1 and flag.first.is_visible()
    assert "really passes" in flag.first.inner_text()
    assert _background(page, "#rverdict-1-1") != RED
    page.reload()
    assert page.locator('#repair-1 [data-testid="contradicted"]').first.is_visible()
    _assert_clean(page)


# -- Run for real -------------------------------------------------------------------------------------

SAW_PROGRESS = """() => {
  window.__samePage = true;
  window.__sawProgress = "";
  new MutationObserver(() => {
    const p = document.querySelector('[data-testid=run-real-progress]');
    if (p && p.getClientRects().length) { window.__sawProgress = p.textContent; }
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def test_run_for_real_keeps_the_place_shows_progress_and_is_not_offered_again(site, fake_model, page_for):
    page = page_for(site)
    sign_up(page, site, "rita")
    page.goto(create_problem(page, site))
    solve(page, k=2, turns=0, real=False)
    wait_finished(page)
    button = page.locator('[data-testid="run-real"]')
    button.scroll_into_view_if_needed()
    before = page.evaluate("window.scrollY")
    assert before > 0
    page.evaluate(SAW_PROGRESS)
    button.click()
    page.wait_for_selector('[data-testid="real-summary"]', timeout=60_000)
    assert page.evaluate("window.__samePage === true"), "the page reloaded"
    assert abs(page.evaluate("window.scrollY") - before) < 300, "the page jumped away from the panel"
    assert re.search(r"\d+ of \d+", page.evaluate("window.__sawProgress")), "no progress shown"
    # where the results arrive: the panel that held the button
    assert page.locator('#run-real [data-testid="judgement"]').count() == 2
    # every program ran for real: nothing left to offer
    assert page.locator('[data-testid="run-real"]').count() == 0
    assert page.locator('[data-testid="run-real-done"]').is_visible()
    page.reload()
    assert page.locator('[data-testid="run-real"]').count() == 0
    _assert_clean(page)


# -- Ended runs say that they ended --------------------------------------------------------------------


def _assert_ended(page: Any, status: str) -> None:
    """Nothing on the page says that the run still runs, or is being cancelled (every fault listed)."""
    faults = []
    messages = page.locator('[data-testid="messages"]')
    if "Cancelling" in (messages.inner_text() if messages.count() else ""):
        faults.append(f"message: {messages.inner_text()!r}")
    if "cancelling" in page.locator('[data-testid="run-status"]').inner_text():
        faults.append("status: cancelling")
    states = page.locator('[data-testid="stages"] tbody tr td:nth-child(2)').all_inner_texts()
    if not states or "started" in states:
        faults.append(f"stages: {states}")
    result = page.locator('[data-testid="final"]').inner_text()
    if "Running" in result or status not in result:
        faults.append(f"result: {result!r}")
    assert not faults, faults


def test_a_cancelled_run_says_it_ended_everywhere(site, fake_model, page_for):
    fake_model.responder = add_one_script(preamble=SLOW_PREAMBLE * 4)
    fake_model.delay_s = 0.1  # far longer than the test waits: only the cancel ends it
    page = page_for(site)
    sign_up(page, site, "cory")
    page.goto(create_problem(page, site))
    solve(page, k=2, turns=1)
    wait_text(page, "#cand-0-text", min_chars=20)
    page.click('[data-testid="cancel-run"]')
    assert wait_status(page, timeout_s=30) == "cancelled"
    wait_header_counts(page, (0, 0), timeout_s=8)
    _assert_ended(page, "cancelled")
    page.reload()
    _assert_ended(page, "cancelled")
    _assert_clean(page)


def test_a_run_failed_because_the_model_is_down_says_it_ended_everywhere(site, fake_model, page_for):
    page = page_for(site)
    sign_up(page, site, "dawn")
    page.goto(create_problem(page, site))

    def down(body: dict[str, Any]) -> str:
        raise ScriptedFailure(503, "the model is down")  # retried, then the run fails

    fake_model.responder = down
    solve(page, k=2, turns=0)
    assert wait_status(page, timeout_s=60) == "failed"
    wait_header_counts(page, (0, 0), timeout_s=8)
    _assert_ended(page, "failed")
    page.reload()
    _assert_ended(page, "failed")
    _assert_clean(page)


# -- Identical candidates -----------------------------------------------------------------------------


def test_identical_candidates_are_one_card_with_a_count(fake_site, fake_model, page_for, alice, problem):
    fake_model.responder = add_one_script(solve=[RIGHT] * 4)
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=4, turns=0)
    wait_finished(page)
    for view in ("live", "reloaded"):
        if view == "reloaded":
            page.reload()
        cards = page.locator('[data-testid="candidate-card"]:visible')
        assert cards.count() == 1, view
        copies = cards.first.locator('[data-testid="candidate-copies"]')
        assert "written 4 times" in copies.inner_text(), view
        assert "selected" in cards.first.locator('[data-testid="candidate-badge"]').inner_text(), view
        assert page.locator("#mrow-3").inner_text() == "#3 = #0", view  # the matrix keeps a row each
        reason = page.locator('[data-testid="selected"]').inner_text()
        assert "at random" not in reason and "the same program" in reason, reason
    _assert_clean(page)


# -- Repair turns: no raw fence; a rename said --------------------------------------------------------


def test_a_repair_reply_shows_no_code_fence_and_a_rename_says_so(
    fake_site, fake_model, page_for, alice, problem
):
    fake_model.responder = add_one_script(solve=[WRONG], repair=[RENAMED])
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=1, turns=1)
    wait_finished(page)
    for view in ("live", "reloaded"):
        if view == "reloaded":
            page.reload()
        turn = page.locator("#repair-1")
        assert "```" not in turn.inner_text(), view
        renamed = turn.locator('[data-testid="repair-renamed"]')
        assert renamed.is_visible(), view
        assert "x → y" in renamed.inner_text() and "renames" in renamed.inner_text(), view
    _assert_clean(page)


# -- Seconds and tokens -------------------------------------------------------------------------------


def test_stage_seconds_read_as_a_person_reads_them_and_every_model_stage_counts_tokens(
    fake_site, fake_model, page_for, alice, problem
):
    page = page_for(fake_site, alice)
    _problem_page(page, fake_site, problem)
    solve(page, k=2, turns=0)
    wait_finished(page)
    for view in ("live", "reloaded"):
        if view == "reloaded":
            page.reload()
        rows = {
            r.locator("td").nth(0).inner_text(): r.locator("td").all_inner_texts()
            for r in page.locator('[data-testid="stages"] tbody tr').all()
        }
        assert {"solve", "simulate"} <= set(rows), rows
        for name, (_, _, seconds, *_rest) in rows.items():
            assert re.fullmatch(r"\d+ ms|\d+(\.\d)? s|\d+ min \d+ s|", seconds), (view, name, seconds)
        assert re.fullmatch(r"[\d,]+", rows["simulate"][3]), (view, rows["simulate"])
        assert re.fullmatch(r"[\d,]+", rows["solve"][3]), (view, rows["solve"])
        totals = page.locator('[data-testid="provenance-table"]').inner_text()
        assert not re.search(r"seconds: \d+\.\d{2,}", totals), totals
    _assert_clean(page)
