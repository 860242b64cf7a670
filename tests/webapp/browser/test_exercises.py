"""Prediction exercises in Chromium against each mode's site (``site``: production, daphne + Celery +
PostgreSQL + Redis; embedded, ``execsim up``): an educator makes an exercise from a program with a
loop and a function call; two students, each in a browser context of their own and without an account,
answer the same question, one right (keyboard only) and one wrong (clicking); the results page, open
all along, shows 1 of 2 right and the wrong answer without a reload; a next-line question is answered
by clicking a line of the code; the embed works logged out, on a phone too; with the model server
failing, the exercise works and says the model is not available, and with the real default model
(``vllm_server``) its answers appear beside the students'. Takes exercise-student.png and
exercise-results.png (support.SCREENSHOTS)."""

from __future__ import annotations

from typing import Any

import pytest

from simulator.execution import Program, run
from simulator.exercises import propose
from tests.webapp.browser.flows import screenshot, sign_up, wait_until
from tests.webapp.browser.support import embedded_server
from tests.webapp.exercises.support import CALL, LOOP_AND_CALL

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _questions() -> dict[str, Any]:
    """The questions ExecSim proposes for the program (deterministic: the site proposes the same)."""
    program = Program(code=LOOP_AND_CALL, call=CALL)
    return {q.id: q for q in propose(run(program, trace=True, max_steps=2000).trace, program)}


def _make_exercise(page: Any, base: str) -> str:
    """As an educator: trace the program, make an exercise of it, ask the model too; its slug."""
    page.fill("#id_title", "Sum of squares")
    page.fill("#id_code", LOOP_AND_CALL)
    page.fill("#id_call_input", CALL)
    page.click('[data-testid="explore-submit"]')
    page.click('[data-testid="make-exercise-submit"]')
    page.wait_for_selector('[data-testid="exercise-form"]')
    page.check('[data-testid="exercise-with-model"]')
    page.click('[data-testid="exercise-save"]')
    page.wait_for_selector('[data-testid="exercise-results"]')
    return page.url.rstrip("/").split("/")[-2]


def _student(page_for: Any, base: str, slug: str, name: str, path: str = "", **size: Any) -> Any:
    page = page_for(base)
    if size:
        page.set_viewport_size(size)
    page.goto(f"{base}/x/{slug}/{path}")
    page.wait_for_selector('[data-testid="exercise-name"]:focus')
    page.keyboard.type(name)
    page.keyboard.press("Enter")
    page.wait_for_selector('[data-testid="exercise-who"]:not([hidden])')
    return page


def _verdict(page: Any) -> str:
    page.wait_for_selector('[data-testid="exercise-verdict"]')
    return page.locator('[data-testid="exercise-feedback"]').inner_text()


def test_a_class_answers_and_the_results_page_follows_live(site, page_for, fake_model):
    questions = _questions()
    result, line = questions["result"], questions["next_line-2"]
    fake_model.failures = [503] * 40  # the model server fails: the exercise works without it
    try:
        teacher = page_for(site)
        sign_up(teacher, site, "edna", role="educator")
        slug = _make_exercise(teacher, site)
        wait_until(teacher, "document.querySelector('[data-testid=exercise-live]').dataset.state === 'live'")
        wait_until(
            teacher,
            "document.querySelector('[data-testid=exercise-model-score]')"
            ".innerText.includes('not available')",
            timeout_s=60,
        )

        # Ada, keyboard only: the first question (what the call returns) opens with the focus in its box.
        ada = _student(page_for, site, slug, "Ada")
        assert ada.locator('[data-testid="exercise-prompt"]').inner_text() == result.prompt()
        narration = ada.locator('[data-testid="ex-narration"]')
        assert "shows once you answer" in narration.inner_text()  # the narration is hidden by default
        ada.wait_for_selector('[data-testid="exercise-answer"]:focus')
        ada.keyboard.type("[14")  # a typo is explained, not counted
        ada.keyboard.press("Enter")
        ada.wait_for_selector('[data-testid="exercise-error"]')
        assert "never closed" in ada.locator('[data-testid="exercise-error"]').inner_text()
        ada.keyboard.press("Control+A")
        ada.keyboard.type("14")
        ada.keyboard.press("Enter")
        said = _verdict(ada)
        assert "\u2714" in said and result.explanation in said and "model is not available" in said
        ada.wait_for_selector('[data-testid="exercise-continue"]:focus')
        ada.keyboard.press("Enter")
        # Continue goes on to the next question (value-1-s, step 1); its answer shows on step 2, and
        # from there End stops at the next question whatever the key asks for.
        ada.wait_for_selector('[data-testid="exercise-answer"]:focus')
        assert ada.evaluate("window.ExecSimExplorer.current()") == questions["value-1-s"].step
        ada.keyboard.type("0")
        ada.keyboard.press("Enter")
        assert "\u2714" in _verdict(ada)
        ada.keyboard.press("Enter")  # Continue
        wait_until(ada, f"window.ExecSimExplorer.current() === {questions['value-1-s'].reveal}")
        assert narration.inner_text() == questions["value-1-s"].explanation  # shown once answered
        ada.keyboard.press("End")
        ada.wait_for_selector('[data-testid="exercise-answer"]:focus')
        assert ada.evaluate("window.ExecSimExplorer.current()") == line.step

        # Bob answers the same question wrong, with the mouse.
        bob = _student(page_for, site, slug, "<b>Bob</b>")
        bob.fill('[data-testid="exercise-answer"]', "6")
        bob.click('[data-testid="exercise-submit"]')
        assert (
            "\u2718" in _verdict(bob)
            and "14" in bob.locator('[data-testid="exercise-feedback"]').inner_text()
        )

        # The results page, open all along, has both without a reload.
        row = teacher.locator(f'[data-testid="question-result"][data-question="{result.id}"]')
        wait_until(
            teacher,
            "document.querySelector('[data-question=\"result\"] [data-testid=right]')"
            ".innerText.startsWith('1 of 2')",
        )
        assert "6" in row.locator('[data-testid="wrong"]').inner_text()
        names = teacher.locator('[data-testid="student-result"] td:first-child').all_inner_texts()
        assert sorted(names) == ["<b>Bob</b>", "Ada"]  # a name is text, never markup
        if site.mode == "production":
            screenshot(teacher, "exercise-results")

        # A next-line question is answered by clicking the line.
        bob.click('[data-testid="exercise-continue"]')
        bob.fill('[data-testid="exercise-answer"]', questions["value-1-s"].answer)
        bob.keyboard.press("Enter")
        _verdict(bob)
        bob.click('[data-testid="exercise-continue"]')
        bob.click('[data-testid="ex-last"]')
        wait_until(bob, f"window.ExecSimExplorer.current() === {line.step}")
        bob.click(f'[data-testid="ex-code"] li[data-line="{line.answer}"] .src')
        assert "\u2714" in _verdict(bob)
        if site.mode == "production":
            screenshot(bob, "exercise-student")

        # The embed, logged out, on a phone.
        cy = _student(page_for, site, slug, "Cy", "embed/", width=390, height=800)
        cy.keyboard.type("15")
        cy.keyboard.press("Enter")
        assert "\u2718" in _verdict(cy)
        assert cy.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        # In another site's frame the browser sends no cookie: a reload comes back as Cy, by the token
        # the page kept, with the answer given, not as a new student.
        cy.context.clear_cookies()
        cy.reload()
        cy.wait_for_selector('[data-testid="exercise-who"]:not([hidden])')
        assert "Cy" in cy.locator('[data-testid="exercise-who"]').inner_text()
        assert "\u2718" in _verdict(cy)
        teacher.reload()
        assert teacher.locator('[data-testid="student-result"]').count() == 3  # Ada, Bob, Cy: no one new
        for page in (teacher, ada, bob, cy):
            assert page.errors == [], page.errors
    finally:
        fake_model.failures = []


def test_the_real_models_answers_appear_beside_the_students(vllm_server, page_for, tmp_path_factory):
    """Embedded mode with the real default model: it answers every question once when the exercise is
    saved (right or wrong: a 135M model), and a student sees its answer after theirs."""
    data = tmp_path_factory.mktemp("exercise-real-model") / "data"
    with embedded_server(data, vllm_server.url, vllm_server.model_name) as base:
        teacher = page_for(base)
        sign_up(teacher, base, "edna", role="educator")
        slug = _make_exercise(teacher, base)
        score = "document.querySelector('[data-testid=exercise-model-score]').innerText"
        wait_until(teacher, f"{score}.startsWith('The model: ')", timeout_s=300)
        assert "of 8 right" in teacher.evaluate(score)
        answers = teacher.locator('[data-testid="question-result"] [data-testid="model"]').all_inner_texts()
        assert len(answers) == 8 and all(
            a in ("no usable answer",) or "right" in a or "wrong" in a for a in answers
        )
        ada = _student(page_for, base, slug, "Ada")
        ada.keyboard.type("14")
        ada.keyboard.press("Enter")
        said = ada.locator('[data-testid="exercise-model"]')
        said.wait_for()
        assert said.inner_text().startswith(("The model answered", "The model gave no usable answer"))
        assert ada.errors == [] and teacher.errors == []
