"""What a newcomer educator meets (issue 52, "Educator"), in Chromium, one test per item: presentation
mode and the embed fit one screen (code left, frames and objects right, as Python Tutor lays them out);
steps counted from 1 everywhere a person reads one (stepper, go to step, divergence sentences,
permalinks, old 0-based permalinks still open); the narration says each step once, tells recursion,
aliasing, a function that ends without `return` and exceptions in plain words; call mode shows a Global
frame; a 390 px phone keeps `total = 10` on one line, arrows cross no label, an impossible "Go to step"
is said in the page; an educator's sign-up lands on the explorer with the explanation, and the role
select says what each role is for."""

# ruff: noqa: F811 (the explorer tests' fixtures, imported below, are the tests' arguments)
from __future__ import annotations

import re
from typing import Any

import pytest

from tests.webapp.explorer.support import browser, educator, page_as  # noqa: F401
from webapp.explorer.models import Trace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LINKED = (
    "class Node:\n"
    "    def __init__(self, value):\n"
    "        self.value = value\n"
    "        self.next = None\n"
    "\n"
    "\n"
    "def build(values):\n"
    "    head = None\n"
    "    for v in reversed(values):\n"
    "        node = Node(v)\n"
    "        node.next = head\n"
    "        head = node\n"
    "    a = [1, 2, 3]\n"
    "    b = a\n"
    "    total = 10\n"
    "    return head\n"
)
FACT = "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n"
WRONG_FACT = (
    "[THOUGHT] fact is called with n = 3. The condition does not hold. It returns 5. [/THOUGHT]\n"
    "[ANSWER] assert fact(3) == 5 [/ANSWER]"
)
GLOBALS = (
    "LIMIT = 10\n\n\nclass Box:\n    pass\n\n\n"
    "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n"
)
SCRIPT_ERROR = "xs = [1, 2]\nys = xs\nprint(ys[5])\n"


def _trace(owner: Any, code: str, call: str | None = None, stdin: str | None = None, **fields: Any) -> Trace:
    from simulator.execution import Program
    from webapp.explorer.views import _save

    program = Program(code=code, stdin=stdin) if stdin is not None else Program(code=code, call=call)
    return _save(owner, program, title=fields.pop("title", call or "script"), **fields)


def _open(page: Any, base: str, trace: Trace, query: str = "", hash_: str = "") -> Any:
    page.goto(f"{base}/explorer/t/{trace.slug}/{query}{hash_}")
    return page


def _go(page: Any, index: int) -> None:
    """To the step at trace index ``index`` (0-based, as the JSON numbers them)."""
    page.evaluate(f"window.ExecSimExplorer.go({index})")


def _narration(page: Any) -> str:
    return page.locator('[data-testid="ex-narration"]').inner_text()


# What lies outside the window: code lines, narration, controls, frames and objects that are cut off.
OUT_OF_VIEW = """() => {
  const H = window.innerHeight, W = window.innerWidth, out = [];
  const check = (el, what) => {
    if (!el) { return; }
    const r = el.getBoundingClientRect();
    if (r.bottom > H + 1 || r.top < -1 || r.right > W + 1 || r.left < -1) {
      out.push(what + ' ' + [Math.round(r.top), Math.round(r.bottom), Math.round(r.right)].join(','));
    }
  };
  document.querySelectorAll('.ex-code li').forEach((li, i) => check(li, 'line ' + (i + 1)));
  document.querySelectorAll('.ex-frame, .ex-obj').forEach(el => check(el, el.className));
  check(document.querySelector('[data-testid=ex-narration]'), 'narration');
  check(document.querySelector('.ex-controls'), 'controls');
  const code = document.querySelector('[data-testid=ex-code]');
  if (code.scrollHeight > code.clientHeight + 1) { out.push('the code box scrolls'); }
  const viz = document.querySelector('[data-testid=ex-viz]');
  if (viz.scrollHeight > viz.clientHeight + 1) { out.push('the diagram scrolls'); }
  if (window.scrollY > 0) { out.push('the page scrolled to ' + window.scrollY); }
  return out;
}"""

SIDE_BY_SIDE = """() => {
  const code = document.querySelector('[data-testid=ex-code]').getBoundingClientRect();
  const viz = document.querySelector('[data-testid=ex-viz]').getBoundingClientRect();
  return {codeRight: code.right, vizLeft: viz.left, vizTop: viz.top, codeBottom: code.bottom};
}"""


def _assert_side_by_side(page: Any) -> None:
    box = page.evaluate(SIDE_BY_SIDE)
    assert box["codeRight"] <= box["vizLeft"], box  # frames and objects to the right of the code
    assert box["vizTop"] < box["codeBottom"], box  # beside it, not below it


# -- presentation mode and the embed fit one screen ----------------------------------------------


def test_presentation_mode_fits_one_screen_code_left_frames_and_objects_right(page_as, live_server, educator):
    trace = _trace(educator, LINKED, "build([1, 2, 3])", title="A linked list")
    page = page_as(educator)
    page.set_viewport_size({"width": 1280, "height": 900})
    _open(page, live_server.url, trace, "?present=1")
    _assert_side_by_side(page)
    for index in range(trace.step_count):
        _go(page, index)
        cut = page.evaluate(OUT_OF_VIEW)
        assert not cut, (index, cut)
    page.screenshot(path="/tmp/execsim-present.png")


def test_the_embed_snippet_fits_its_content_and_presentation_leaves_the_frame(page_as, live_server, educator):
    trace = _trace(educator, LINKED, "build([1, 2, 3])", title="A linked list")
    page = page_as(educator)
    page.set_viewport_size({"width": 1280, "height": 900})
    _open(page, live_server.url, trace)
    snippet = page.locator('[data-testid="ex-embed-code"]').input_value()
    height = int(re.search(r'height="(\d+)"', snippet).group(1))
    host = page_as(None)
    host.set_viewport_size({"width": 1000, "height": height + 40})
    host.set_content(f'<body style="margin:0">{snippet}</body>')
    frame = next(f for f in host.frames if "/embed/" in f.url)
    frame.wait_for_load_state()
    frame.locator('[data-testid="ex-code"] li').first.wait_for()
    _assert_side_by_side(frame)
    for index in range(trace.step_count):
        frame.evaluate(f"window.ExecSimExplorer.go({index})")
        cut = frame.evaluate(OUT_OF_VIEW)
        assert not cut, (height, index, cut)
    frame.evaluate(f"window.ExecSimExplorer.go({trace.step_count - 2})")
    with host.expect_popup() as popup:  # a projector wants the whole screen, not the host page's box
        frame.locator('[data-testid="ex-present"]').click()
    shown = popup.value
    shown.wait_for_load_state()
    assert "present=1" in shown.url and f"#step-{trace.step_count - 1}" in shown.url
    assert frame.evaluate("document.body.className").find("present") == -1  # the embed stays as it was
    assert not frame.evaluate(OUT_OF_VIEW)


# -- steps counted from 1 ----------------------------------------------------------------------


def test_steps_are_counted_from_1_in_the_stepper_links_and_sentences(page_as, live_server, educator):
    trace = _trace(educator, FACT, "fact(3)", model_text=WRONG_FACT)
    count = trace.step_count
    page = _open(page_as(educator), live_server.url, trace)
    assert f"{count} steps" in page.locator(".ex-links").inner_text()
    assert page.locator(".ex-position").inner_text() == f"Step 1 of {count}"  # the header's count
    assert page.locator('[data-testid="ex-slider"]').get_attribute("min") == "1"
    page.click('[data-testid="ex-last"]')
    assert page.locator(".ex-position").inner_text() == f"Step {count} of {count}"
    assert page.url.endswith(f"#step-{count}")  # the permalink names the step as shown
    page.fill('[data-testid="ex-jump-input"]', "3")
    page.press('[data-testid="ex-jump-input"]', "Enter")
    assert page.locator('[data-testid="ex-step"]').inner_text() == "3" and page.url.endswith("#step-3")
    assert page.evaluate("window.ExecSimExplorer.current()") == 2  # the trace's own index, from 0

    sentence = page.locator('[data-testid="verification-sentence"]').inner_text()
    said = int(re.search(r"\(step (\d+)\)", sentence).group(1))
    held = trace.verification["first_divergence"]["step"]  # the JSON index, from 0
    assert said == held + 1, (sentence, held)
    link = page.locator('[data-testid="verification-step"]')
    assert link.inner_text() == f"go to step {said}"
    link.click()
    assert page.locator('[data-testid="ex-step"]').inner_text() == str(said)
    assert page.url.endswith(f"#step-{said}")

    for hash_, shown in ((f"#step-{count}", count), ("#step-1", 1), ("#step-0", 1)):  # #step-0: an old link
        page = _open(page, live_server.url, trace, hash_=hash_)
        assert page.locator('[data-testid="ex-step"]').inner_text() == str(shown), hash_


# -- narration -----------------------------------------------------------------------------------


def test_the_narration_says_each_step_once_in_plain_words(page_as, live_server, educator):
    page = page_as(educator)
    said: list[str] = []
    for code, call, stdin in (
        (FACT, "fact(3)", None),
        (LINKED, "build([1, 2])", None),
        (SCRIPT_ERROR, None, ""),
    ):
        trace = _trace(educator, code, call, stdin)
        _open(page, live_server.url, trace)
        previous = None
        for index in range(trace.step_count):
            _go(page, index)
            text = _narration(page)
            assert text and text != previous, (code, index, text)  # no sentence shown twice in a row
            previous = text
            said.append(text)
    everything = "\n".join(said)
    assert "calling fact 1 time" not in everything  # the recursion is stepped through: say what it gave
    assert "fact(1) returned 1" in everything or "fact returned 1" in everything, everything
    assert "`self.next = None` returns None" not in everything  # the line does not return anything
    assert "__init__ ends" in everything, everything
    assert "the same list as a" in everything, everything  # b = a: one list, two names
    assert "the same list as xs" in everything, everything
    assert "goes on to its caller" not in everything and "<module>" not in everything
    assert "IndexError: list index out of range" in everything, everything
    assert "Nothing catches the IndexError" in everything, everything
    status = page.locator('[data-testid="ex-status"]')
    assert "runtime_error" not in status.inner_text() and "error" in status.inner_text(), status.inner_text()
    assert status.get_attribute("data-status") == "runtime_error"  # the raw status, for scripts


# -- the Global frame in call mode -------------------------------------------------------------------


def test_call_mode_shows_a_global_frame_with_the_functions_and_classes(page_as, live_server, educator):
    trace = _trace(educator, GLOBALS, "fact(2)")
    page = _open(page_as(educator), live_server.url, trace)
    heads = page.locator('[data-testid="ex-frame-head"]')
    assert heads.first.inner_text().startswith("Global frame"), heads.all_inner_texts()
    glob = page.locator('[data-testid="ex-frames"] .ex-frame').first
    cells = {
        r.get_attribute("data-name"): r.locator("td.value").inner_text()
        for r in glob.locator("tr[data-name]").all()
    }
    assert cells == {"LIMIT": "10", "Box": "class Box", "fact": "function fact(n)"}, cells
    _go(page, trace.step_count - 2)  # inside the recursion: Global, fact, fact
    assert [h.split()[0] for h in heads.all_inner_texts()] == ["Global", "fact", "fact"]


# -- a phone, the arrows, an impossible step ------------------------------------------------------


def test_a_390_px_phone_keeps_short_values_on_one_line(page_as, live_server, educator):
    trace = _trace(educator, LINKED, "build([1, 2, 3])")
    phone = page_as(educator)
    phone.set_viewport_size({"width": 390, "height": 844})
    _open(phone, live_server.url, trace)
    _go(phone, trace.step_count - 1)
    lines = phone.evaluate(
        """() => Array.from(document.querySelectorAll('.ex-frame tr[data-name] > *'))
          .filter(td => td.textContent.trim().length && td.textContent.trim().length <= 12)
          .map(td => { const r = document.createRange(); r.selectNodeContents(td);
                       const tops = new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top)));
                       return [td.closest('tr').dataset.name, td.textContent.trim(), tops.size]; })"""
    )
    wrapped = [cell for cell in lines if cell[2] > 1]
    assert not wrapped, wrapped
    assert ["total", "10", 1] in lines
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390


def test_arrows_cross_no_label_in_the_frames(page_as, live_server, educator):
    trace = _trace(educator, LINKED, "build([1, 2, 3])")
    page = page_as(educator)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        _open(page, live_server.url, trace)
        _go(page, trace.step_count - 1)
        crossed = page.evaluate(
            """() => {
              const viz = document.querySelector('[data-testid=ex-viz]'), box = viz.getBoundingClientRect();
              const labels = [];  // the text of the frames (names, values, types), not the dots
              const frames = document.querySelector('[data-testid=ex-frames]');
              const walk = document.createTreeWalker(frames, NodeFilter.SHOW_TEXT);
              for (let node = walk.nextNode(); node; node = walk.nextNode()) {
                if (!node.textContent.trim()) { continue; }
                const r = document.createRange(); r.selectNodeContents(node);
                labels.push([node.textContent.trim(), Array.from(r.getClientRects())]);
              }
              const hits = [];
              document.querySelectorAll('path.ex-arrow').forEach(path => {
                const n = path.getTotalLength();
                for (let i = 0; i <= 60; i++) {
                  const p = path.getPointAtLength(n * i / 60);
                  const x = p.x + box.left - viz.scrollLeft, y = p.y + box.top - viz.scrollTop;
                  labels.forEach(([text, rects]) => rects.forEach(r => {
                    if (x > r.left && x < r.right && y > r.top && y < r.bottom) { hits.push(text); }
                  }));
                }
              });
              return Array.from(new Set(hits));
            }"""
        )
        assert page.locator("path.ex-arrow").count() >= 6
        assert not crossed, (width, crossed)


def test_an_impossible_go_to_step_is_said_in_the_page(page_as, live_server, educator):
    trace = _trace(educator, FACT, "fact(3)")
    page = _open(page_as(educator), live_server.url, trace)
    page.fill('[data-testid="ex-jump-input"]', "99")
    page.press('[data-testid="ex-jump-input"]', "Enter")
    error = page.locator('[data-testid="ex-jump-error"]')
    assert error.is_visible(), "no message in the page"
    assert error.inner_text() == f"There is no step 99: the steps go from 1 to {trace.step_count}."
    assert page.locator('[data-testid="ex-jump-input"]').get_attribute("aria-invalid") == "true"
    assert page.locator('[data-testid="ex-step"]').inner_text() == "1"  # the stepper stayed
    page.fill('[data-testid="ex-jump-input"]', "2")
    page.press('[data-testid="ex-jump-input"]', "Enter")
    assert not error.is_visible() and page.locator('[data-testid="ex-step"]').inner_text() == "2"


# -- sign-up -----------------------------------------------------------------------------------------


def test_an_educator_signs_up_and_lands_on_the_explorer_with_the_explanation(page_as, live_server, settings):
    settings.EXECSIM_SIGNUPS_PER_HOUR = 10_000  # whatever other tests signed up this hour
    page = page_as(None)
    page.goto(f"{live_server.url}/accounts/signup/")
    help_id = page.locator("#id_role").get_attribute("aria-describedby")
    assert help_id, "the role select says nothing about the roles"
    roles = page.locator(f"#{help_id}").inner_text()
    for role, words in (("Developer", "solve"), ("Educator", "Trace explorer"), ("Annotator", "correct")):
        assert re.search(rf"{role}\b[^\n]*{words}", roles), roles
    page.fill("#id_username", "edith")
    page.fill("#id_password1", "a-Long-pass-4321")
    page.fill("#id_password2", "a-Long-pass-4321")
    page.select_option("#id_role", "educator")
    page.click('[data-testid="signup-submit"]')
    page.wait_for_url(f"{live_server.url}/explorer/")
    welcome = page.locator('[data-testid="welcome"]')
    assert welcome.is_visible()
    text = welcome.inner_text()
    assert "imagining how its own code" in text and "step through" in text, text
    assert page.locator('[data-testid="explore-form"]').is_visible()
