"""The explorer in Chromium: step with buttons, keys, slider and jump; the changed value and the
current line highlighted; a claim click jumps to its step; the embed link works logged out.
Also takes the explorer.png screenshot (see support.SCREENSHOTS)."""

from __future__ import annotations

import pytest

from tests.webapp.browser.support import SCREENSHOTS
from webapp.explorer.models import Trace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CODE = (
    "def scale(x):\n    return x * 10\n\n\ndef total(xs):\n    acc = 0\n    for x in xs:\n"
    "        acc += scale(x)\n        print(acc)\n    return acc\n"
)
MODEL = (
    "[THOUGHT] total is called with xs = [1, 2]. acc starts at 0. For x = 1, acc becomes 10. "
    "For x = 2, acc becomes 20. It returns 30. [/THOUGHT]\n[ANSWER] assert total([1, 2]) == 30 [/ANSWER]"
)


def test_stepping_through_a_trace_with_buttons_keys_and_links(page_as, live_server, educator):
    page = page_as(educator)
    page.goto(f"{live_server.url}/explorer/")
    page.fill("#id_title", "A running total")
    page.fill("#id_code", CODE)
    page.fill("#id_call_input", "total([1, 2])")
    page.fill("#id_model_text", MODEL)
    page.click('[data-testid="explore-submit"]')
    page.wait_for_url("**/explorer/t/**")
    trace = Trace.objects.get()
    last = trace.step_count - 1

    step = page.locator('[data-testid="ex-step"]')  # counted from 1, as a person reads it
    assert step.inner_text() == "1"
    assert page.locator(".ex-code li.current").get_attribute("data-line") == "5"
    assert "total is called with xs = [1, 2]" in page.locator('[data-testid="ex-narration"]').inner_text()
    page.click('[data-testid="ex-forward"]')
    page.click('[data-testid="ex-forward"]')
    assert step.inner_text() == "3"
    assert page.locator(".ex-code li.current").get_attribute("data-line") == "7"
    changed = page.locator('[data-testid="ex-frames"] tr.changed')
    assert changed.count() == 1 and changed.get_attribute("data-name") == "acc"
    page.click('[data-testid="ex-back"]')
    assert step.inner_text() == "2"

    page.locator("body").click(position={"x": 5, "y": 5})  # focus off any input
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert step.inner_text() == "5"
    stack = page.locator('[data-testid="ex-stack"] li')
    assert stack.count() == 2 and stack.first.inner_text().startswith("scale")  # inside the helper
    page.keyboard.press("ArrowLeft")
    assert step.inner_text() == "4"
    page.keyboard.press("End")
    assert step.inner_text() == str(last + 1)
    assert page.locator('[data-testid="ex-stdout"]').inner_text().strip() == "10\n30"
    page.keyboard.press("Home")
    assert step.inner_text() == "1" and page.locator('[data-testid="ex-first"]').is_disabled()
    page.click('[data-testid="ex-last"]')
    assert step.inner_text() == str(last + 1) and page.locator('[data-testid="ex-forward"]').is_disabled()
    page.click('[data-testid="ex-first"]')

    page.fill('[data-testid="ex-jump-input"]', "6")
    page.press('[data-testid="ex-jump-input"]', "Enter")
    assert step.inner_text() == "6"
    page.locator('[data-testid="ex-slider"]').fill("3")
    assert step.inner_text() == "3"

    divergence = page.locator('[data-testid="ex-model"] [data-testid="verification"]')
    assert "acc becomes 20" in divergence.inner_text() and "30" in divergence.inner_text()
    wrong = page.locator('[data-testid="ex-model-text"] .claim-false').first
    wrong.click()
    assert step.inner_text() == str(int(wrong.get_attribute("data-step")) + 1)  # data-step: the index
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "explorer.png"), full_page=True)

    page.click('[data-testid="ex-present"]')
    assert "present" in page.evaluate("document.body.className")

    embed_url = page.locator('[data-testid="ex-embed-link"]').get_attribute("href")
    anonymous = page_as(None)
    response = anonymous.goto(embed_url)
    assert response.status == 200 and "x-frame-options" not in response.headers
    assert anonymous.locator('[data-testid="nav-login"]').count() == 0
    anonymous.click('[data-testid="ex-last"]')
    assert anonymous.locator('[data-testid="ex-step"]').inner_text() == str(last + 1)
    assert anonymous.locator('[data-testid="ex-model-text"] .claim-false').count() >= 1


def test_an_embed_is_framed_by_another_page(page_as, live_server, educator):
    from simulator.execution import Program
    from webapp.explorer.views import _save

    trace = _save(educator, Program(code=CODE, call="total([3])"), title="framed")
    page = page_as(None)
    page.goto(f"{live_server.url}/explorer/t/{trace.slug}/embed/")  # same origin, then frame it
    page.set_content(
        f'<iframe src="{live_server.url}/explorer/t/{trace.slug}/embed/" width="1200" height="700"></iframe>'
    )
    frame = page.frame_locator("iframe")
    frame.locator('[data-testid="ex-forward"]').click()
    assert frame.locator('[data-testid="ex-step"]').inner_text() == "2"


def test_a_generator_yields_and_resumes_it_is_not_called_again(page_as, live_server, educator):
    from simulator.execution import Program
    from webapp.explorer.views import _save

    code = (
        "def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i\n\n\n"
        "def f(n):\n    return list(evens(n))\n"
    )
    trace = _save(educator, Program(code=code, call="f(3)"), title="a generator")
    page = page_as(educator)
    page.goto(f"{live_server.url}/explorer/t/{trace.slug}/#step-7")  # the first yield (index 6)
    event, narration = page.locator('[data-testid="ex-event"]'), page.locator('[data-testid="ex-narration"]')
    assert (
        event.inner_text() == "yield from evens \u2192 0" and "`yield i` yields 0" in narration.inner_text()
    )
    page.click('[data-testid="ex-forward"]')
    assert event.inner_text() == "resume: evens goes on after its yield (line 4)"
    resumes = narration.inner_text()
    assert "evens resumes with " in resumes and "i = 0" in resumes and "is called" not in resumes
    page.click('[data-testid="ex-forward"]')
    page.click('[data-testid="ex-forward"]')
    assert "starts the next iteration; now i = 1" in narration.inner_text()
