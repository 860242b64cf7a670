"""The explorer as an educator uses it (issue 13, "Educator"), in Chromium: frames and heap objects with
arrows (aliasing shows, instance attributes too), where am I (next and previous line, the return value,
the line that raised), narration in step (callees and recursion), partial traces flagged, the step in
the URL (hash edits, Back), presentation mode with an exit and the result hidden until the last step,
edit and trace again, frames named by function and depth, a 390 px phone, no link to a screen the
role cannot use. Takes explorer-educator.png (see support.SCREENSHOTS)."""

from __future__ import annotations

import re

import pytest

from tests.webapp.browser.flows import wait_until
from tests.webapp.browser.support import SCREENSHOTS
from webapp.explorer.models import Trace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ALIAS = (
    "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n\n\n"
    "def f(xs):\n    ys = xs\n    zs = list(xs)\n    ys.append(4)\n"
    "    p = Point(1, [zs])\n    p.x = 7\n    return ys\n"
)
FACT = "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n"
DOUBLE = "def f(xs):\n    out = []\n    for x in xs:\n        out.append(x * 2)\n    return out\n"
RAISE = "def inverse(x):\n    return 1 / x\n\n\ndef f():\n    return inverse(0)\n"


def _trace(owner, code: str, call: str, title: str = "") -> Trace:
    from simulator.execution import Program
    from webapp.explorer.views import _save

    return _save(owner, Program(code=code, call=call), title=title or call)


def _open(page, live_server, trace: Trace, query: str = "", step: int | None = None):
    """``step``: the trace's index (from 0); the permalink names it from 1."""
    hash_ = f"#step-{step + 1}" if step is not None else ""
    page.goto(f"{live_server.url}/explorer/t/{trace.slug}/{query}{hash_}")
    return page


def _step(page) -> int:
    """The trace's index of the step shown (the stepper counts from 1)."""
    return int(page.locator('[data-testid="ex-step"]').inner_text()) - 1


def _go(page, n: int) -> None:
    page.evaluate(f"window.ExecSimExplorer.go({n})")


def _ref(page, name: str) -> str | None:
    return page.locator(
        f'[data-testid="ex-frames"] .ex-frame.active tr[data-name="{name}"] .ex-ptr'
    ).get_attribute("data-ref")


def test_objects_are_drawn_with_arrows_so_aliasing_and_attributes_show(page_as, live_server, educator):
    trace = _trace(educator, ALIAS, "f([1, 2])", "Aliasing")
    steps = trace.trace["steps"]
    page = _open(page_as(educator), live_server, trace)
    last_f = max(i for i, s in enumerate(steps) if s["function"] == "f")
    _go(page, last_f)  # the return step of f
    assert _ref(page, "xs") == _ref(page, "ys") != _ref(page, "zs")  # an alias, and a copy
    shared = page.locator(f'.ex-obj[data-obj="{_ref(page, "xs")}"]')
    assert shared.get_attribute("data-kind") == "list"
    assert [c.inner_text() for c in shared.locator(".ex-val").all()] == ["1", "2", "4"]
    copy = page.locator(f'.ex-obj[data-obj="{_ref(page, "zs")}"]')
    assert [c.inner_text() for c in copy.locator(".ex-val").all()] == ["1", "2"]
    point = page.locator(f'.ex-obj[data-obj="{_ref(page, "p")}"]')
    assert point.get_attribute("data-kind") == "object" and "Point instance" in point.inner_text()
    rows = {r.locator("th").inner_text(): r.locator("td") for r in point.locator("tr").all()}
    assert rows["x"].inner_text() == "7"  # the attribute as changed on line 12
    inner = rows["y"].locator(".ex-ptr").get_attribute("data-ref")  # y = [zs]: a list holding the copy
    assert page.locator(f'.ex-obj[data-obj="{inner}"] .ex-ptr').get_attribute("data-ref") == _ref(page, "zs")
    arrows = page.locator('[data-testid="ex-arrows"] path.ex-arrow')
    pointers = page.locator('[data-testid="ex-viz"] .ex-ptr')
    assert arrows.count() == pointers.count() >= 6  # one arrow per reference, each to a drawn object
    for target in {a.get_attribute("data-ref") for a in arrows.all()}:
        assert page.locator(f'.ex-obj[data-obj="{target}"]').count() == 1
    returned = page.locator('[data-testid="ex-return"] .ex-ptr')  # f's return step: it returns ys
    assert returned.get_attribute("data-ref") == _ref(page, "ys")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator('[data-testid="explorer"]').screenshot(path=str(SCREENSHOTS / "explorer-objects.png"))


def test_functions_and_classes_read_as_python_tutor_shows_them(page_as, live_server, educator):
    code = (
        "class Point:\n    pass\n\n\n"
        "def make_adder(n):\n    def add(x):\n        return x + n\n    return add\n\n\n"
        "def build(items,\n          key=tuple(),  # (a comment)\n          *rest):\n"
        "    return [make_adder, lambda y: y]\n\n\nadd3 = make_adder(3)\nout = build([1])\n"
    )
    trace = _trace(educator, code, None, "Functions")  # a script
    page = _open(page_as(educator), live_server, trace, step=trace.step_count - 1)
    cells = {
        r.get_attribute("data-name"): r.locator("td.value")
        for r in page.locator('[data-testid="ex-frames"] tr[data-name]').all()
    }
    assert cells["Point"].inner_text() == "class Point"
    assert cells["make_adder"].inner_text() == "function make_adder(n)"
    assert cells["build"].inner_text() == "function build(items, key=tuple(), *rest)"  # over three lines
    assert cells["add3"].inner_text() == "function add(x)"  # a closure, by its own name
    assert (
        cells["add3"].get_attribute("title") == "<function make_adder.<locals>.add at 0x...>"
    )  # Python's repr
    listed = page.locator(f'.ex-obj[data-obj="{_ref(page, "out")}"] .ex-val')
    assert [c.inner_text() for c in listed.all()] == ["function make_adder(n)", "function <lambda>"]


def test_where_am_i_next_and_previous_line_return_value_and_the_line_that_raised(
    page_as, live_server, educator
):
    page = _open(page_as(educator), live_server, _trace(educator, DOUBLE, "f([1, 3])"))
    page.click('[data-testid="ex-forward"]')
    page.click('[data-testid="ex-forward"]')  # line 3 about to run, line 2 just ran
    assert page.locator(".ex-code li.current").get_attribute("data-line") == "3"
    assert page.locator(".ex-code li.prev").get_attribute("data-line") == "2"
    page.click('[data-testid="ex-last"]')
    ret = page.locator('[data-testid="ex-return"]')
    assert ret.count() == 1 and "Return value" in ret.inner_text()
    assert ret.locator(".ex-ptr").count() == 1  # the returned list is drawn as an object
    returned = ret.locator(".ex-ptr").get_attribute("data-ref")
    assert page.locator(f'.ex-obj[data-obj="{returned}"]').inner_text().split() == [
        "list",
        "0",
        "2",
        "1",
        "6",
    ]

    failing = _trace(educator, RAISE, "f()")
    page = _open(page, live_server, failing)
    at = next(i for i, s in enumerate(failing.trace["steps"]) if s["event"] == "exception")
    _go(page, at)
    raised = page.locator(".ex-code li.raised")
    assert raised.count() == 1 and raised.get_attribute("data-line") == "2"
    assert "ZeroDivisionError('division by zero')" in raised.locator(".ex-exc").inner_text()
    color = raised.locator(".src").evaluate("e => getComputedStyle(e).color")
    assert color == "rgb(207, 34, 46)"  # red
    _go(page, at - 1)
    assert page.locator(".ex-code li.raised").count() == 0


def test_narration_follows_the_stepper_into_callees_and_recursion(page_as, live_server, educator):
    trace = _trace(educator, DOUBLE, "f([1, 3])")
    page = _open(page_as(educator), live_server, trace)
    narration = page.locator('[data-testid="ex-narration"]')
    seen_first = False
    for i in range(len(trace.trace["steps"])):  # the sentence never runs ahead of the frame
        _go(page, i)
        out = page.locator('.ex-frame.active tr[data-name="out"]')
        if out.count() and "now out = " in narration.inner_text():
            shown = re.search(r"now out = (\[[^\]]*\])", narration.inner_text()).group(1)
            obj = page.locator(f'.ex-obj[data-obj="{out.locator(".ex-ptr").get_attribute("data-ref")}"]')
            assert "[" + ", ".join(v.inner_text() for v in obj.locator(".ex-val").all()) + "]" == shown
            seen_first = seen_first or shown == "[2]"
    assert seen_first

    recursive = _trace(educator, FACT, "fact(3)")
    page = _open(page, live_server, recursive)
    deepest = next(i for i, s in enumerate(recursive.trace["steps"]) if s["depth"] == 2)
    _go(page, deepest)
    assert "fact is called with n = 1" in narration.inner_text()
    heads = [h.inner_text() for h in page.locator('[data-testid="ex-frame-head"]').all()]
    assert heads[0] == "Global frame"  # call mode: the definitions, above the call's frames
    heads = heads[1:]
    assert [h.split()[0] for h in heads] == ["fact", "fact", "fact"]
    assert [h.split()[-1] for h in heads] == ["0", "1", "2"]  # named by function and call depth
    _go(page, deepest + 3)  # the innermost call returns
    assert "returns 1" in narration.inner_text()
    columns = page.evaluate(
        "Array.from(document.querySelectorAll('.ex-frame tr[data-name=\"n\"] td.value'))"
        ".map(td => Math.round(td.getBoundingClientRect().left))"
    )
    assert len(set(columns)) == 1  # value columns aligned across the frames


@pytest.mark.parametrize(
    ("code", "cap", "reason", "words", "status"),
    [
        (
            "def spin():\n    n = 0\n    while True:\n        n += 1\n",
            40,
            "max_steps",
            "only the first 40 steps",
            "timeout",
        ),
        (
            "def spin():\n    import time\n    while True:\n        time.sleep(0.4)\n",
            2000,
            "timeout",
            "time limit",
            "timeout",
        ),
        (
            "def spin():\n    while True:\n        print('x' * 100000)\n",
            2000,
            "output_limit",
            "stopped for printing too much",
            "output_limit",
        ),
    ],
    ids=["forever", "timeout", "prints"],
)
def test_a_program_that_never_ends_shows_its_first_steps_flagged(
    page_as, live_server, educator, settings, code, cap, reason, words, status
):
    settings.EXECSIM_EXPLORER_MAX_STEPS = cap
    page = page_as(educator)
    page.goto(f"{live_server.url}/explorer/")
    page.fill("#id_code", code)
    page.fill("#id_call_input", "spin()")
    page.click('[data-testid="explore-submit"]')
    page.wait_for_url("**/explorer/t/**")
    trace = Trace.objects.get()
    assert trace.status == status and trace.step_count > 3
    cap_banner = page.locator('[data-testid="ex-cap"]')
    assert cap_banner.is_visible() and cap_banner.get_attribute("data-reason") == reason
    assert words in cap_banner.inner_text() and cap_banner.inner_text().startswith("Partial trace")
    assert page.locator('[data-testid="ex-empty"]').count() == 0
    assert page.locator('[data-testid="ex-total"]').inner_text() == str(trace.step_count)  # 1 to the count
    page.click('[data-testid="ex-last"]')
    assert _step(page) == trace.step_count - 1
    assert page.locator(".ex-code li.current").count() == 1
    assert page.locator('[data-testid="ex-narration"]').inner_text()


def test_the_step_is_in_the_url_and_follows_hash_edits_and_back(page_as, live_server, educator):
    trace = _trace(educator, FACT, "fact(3)")
    count = trace.step_count
    page = _open(page_as(educator), live_server, trace, step=3)
    assert _step(page) == 3
    assert page.locator(".ex-position").inner_text() == f"Step 4 of {count}"  # numbered 1 to the count
    page.click('[data-testid="ex-forward"]')
    assert page.url.endswith("#step-5")
    page.evaluate("location.hash = '#step-2'")
    wait_until(page, "document.querySelector('[data-testid=ex-step]').textContent === '2'")
    page.fill('[data-testid="ex-jump-input"]', "8")
    page.press('[data-testid="ex-jump-input"]', "Enter")
    assert _step(page) == 7 and page.url.endswith("#step-8")
    page.go_back()
    wait_until(page, "document.querySelector('[data-testid=ex-step]').textContent === '2'")
    assert page.url.endswith("#step-2")


BREAKS = (
    "def f(xs):\n    out = []  # hide: out\n    for x in xs:\n        out.append(x * 2)  # break\n"
    "    return out\n"
)


def test_breakpoints_make_forward_and_back_jump_and_hidden_names_leave_the_frames(
    page_as, live_server, educator
):
    """As in Python Tutor: a line ending in `# break` or a clicked line number is a breakpoint, Forward
    and Back (and the arrow keys) jump between the steps on such lines; once they differ from the code's
    comments the set stays in the URL (a comment's cleared one too);
    `# hide: out` leaves `out` out of the frames."""
    trace = _trace(educator, BREAKS, "f([1, 3, 5])")
    steps = trace.trace["steps"]
    on = {n: [i for i, s in enumerate(steps) if s["line"] == n and s["event"] == "line"] for n in (4, 5)}
    assert len(on[4]) == 3 and len(on[5]) == 1
    page = _open(page_as(educator), live_server, trace)
    line = lambda n: page.locator(f'.ex-code li[data-line="{n}"]')  # noqa: E731
    assert "break" in line(4).get_attribute("class")  # from its comment
    note = page.locator('[data-testid="ex-breaks"]')
    assert "Breakpoint on line 4" in note.inner_text() and "Hidden (# hide:): out" in note.inner_text()
    page.click('[data-testid="ex-forward"]')
    assert _step(page) == on[4][0]
    page.keyboard.press("ArrowRight")
    assert _step(page) == on[4][1]
    page.click('[data-testid="ex-back"]')
    assert _step(page) == on[4][0]
    frame = page.locator('[data-testid="ex-frames"] .ex-frame.active')
    assert frame.locator('tr[data-name="out"]').count() == 0  # hidden, with the list only it reaches
    assert frame.locator('tr[data-name="x"]').count() == 1
    assert page.locator('[data-testid="ex-heap"] .ex-obj').count() == 1  # xs only

    line(5).locator("button.ln").click()  # a second breakpoint, by its line number
    assert line(5).locator("button.ln").get_attribute("aria-pressed") == "true"
    assert "Breakpoints on lines 4, 5" in note.inner_text()
    assert "break=4%2C5" in page.url  # the set, once it differs from the one the code sets
    _go(page, on[4][2])
    page.click('[data-testid="ex-forward"]')
    assert _step(page) == on[5][0]
    page.click('[data-testid="ex-forward"]')  # no breakpoint after it: the last step
    assert _step(page) == len(steps) - 1
    assert "break=4%2C5" in page.locator('[data-testid="ex-present"]').get_attribute("href")

    page.reload()  # the URL keeps the clicked breakpoint
    assert "break" in line(5).get_attribute("class") and "break" in line(4).get_attribute("class")
    line(4).locator("button.ln").click()  # the comment's breakpoint cleared: that holds too
    assert page.url.endswith("?break=5") or "?break=5#" in page.url
    page.reload()
    assert "break" not in (line(4).get_attribute("class") or "") and "break" in line(5).get_attribute("class")
    line(5).locator("button.ln").click()
    line(4).locator("button.ln").click()
    assert "break=" not in page.url  # back to what the code sets: nothing to keep
    page.click('[data-testid="ex-breaks-clear"]')
    assert page.locator(".ex-code li.break").count() == 0 and "?break=" in page.url  # none, kept
    page.reload()
    assert page.locator(".ex-code li.break").count() == 0
    _go(page, 0)
    page.click('[data-testid="ex-forward"]')  # no breakpoint: one step
    assert _step(page) == 1


def test_presentation_is_a_url_flag_with_an_exit_and_can_hide_the_result(page_as, live_server, educator):
    trace = _trace(educator, DOUBLE, "f([1, 3])")
    page = _open(page_as(educator), live_server, trace, step=2)
    page.click('[data-testid="ex-present"]')
    assert "present" in page.evaluate("document.body.className")
    assert "present=1" in page.url and page.url.endswith("#step-3")
    assert page.locator('[data-testid="ex-present-exit"]').is_visible()
    assert not page.locator("header.top").is_visible()
    page.click('[data-testid="ex-present-exit"]')
    assert "present" not in page.evaluate("document.body.className") and "present=1" not in page.url
    assert page.locator("header.top").is_visible() and _step(page) == 2

    page = _open(page, live_server, trace, query="?present=1&hide=result")
    result = page.locator('[data-testid="ex-result-box"]')
    assert "present" in page.evaluate("document.body.className") and not result.is_visible()
    page.click('[data-testid="ex-forward"]')
    assert not result.is_visible()
    page.click('[data-testid="ex-last"]')
    assert result.is_visible() and "[2, 6]" in result.inner_text()


def test_edit_the_code_and_trace_again_from_the_trace_page(page_as, live_server, educator):
    trace = _trace(educator, DOUBLE, "f([1, 3])", "Doubling")
    page = _open(page_as(educator), live_server, trace)
    page.click('[data-testid="ex-edit"] summary')
    assert page.input_value("#id_code") == DOUBLE and page.input_value("#id_call_input") == "f([1, 3])"
    page.fill("#id_code", DOUBLE.replace("x * 2", "x * 3"))
    page.click('[data-testid="ex-retrace"]')
    page.wait_for_url(re.compile(r".*/explorer/t/(?!" + trace.slug + r")[^/]+/$"))
    assert Trace.objects.count() == 2
    page.click('[data-testid="ex-last"]')
    assert "[3, 9]" in page.locator('[data-testid="ex-result"]').inner_text()

    anonymous = _open(page_as(None), live_server, trace)
    assert anonymous.locator('[data-testid="ex-edit"]').count() == 0  # pasting needs an account
    assert anonymous.locator('[data-testid="ex-step"]').inner_text() == "1"


def test_the_trace_page_fits_a_390_px_phone(page_as, live_server, educator):
    trace = _trace(educator, ALIAS, "f([1, 2])", "A rather long title for a trace shown on a phone screen")
    phone = page_as(educator)
    phone.set_viewport_size({"width": 390, "height": 844})
    page = _open(phone, live_server, trace, step=9)
    width = page.evaluate("document.documentElement.scrollWidth")
    wide = page.evaluate(
        "Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > 391)"
        ".slice(0, 8).map(e => e.tagName + '.' + e.className)"
    )
    assert width <= 390, (width, wide)
    permalink = page.locator('[data-testid="ex-permalink"]').bounding_box()
    assert permalink["x"] >= 0 and permalink["x"] + permalink["width"] <= 390
    assert page.locator('[data-testid="ex-forward"]').is_visible()
    page.screenshot(path=str(SCREENSHOTS / "explorer-phone.png"), full_page=False)


def test_an_educator_sees_no_link_to_a_screen_their_role_cannot_use(page_as, live_server, educator, ann1):
    page = page_as(educator)
    page.goto(f"{live_server.url}/explorer/")
    assert page.locator('[data-testid="nav-annotation"]').count() == 0
    for href in page.locator("header.top nav a").evaluate_all("links => links.map(a => a.href)"):
        assert page.request.get(href).status == 200, href  # every link shown opens
    annotator = page_as(ann1)
    annotator.goto(f"{live_server.url}/explorer/")
    assert annotator.locator('[data-testid="nav-annotation"]').count() == 1  # shown to those it is for


def test_the_educator_flow_screenshot(page_as, live_server, educator):
    """Paste a program, step to where two names share one list: the flow's screenshot."""
    page = page_as(educator)
    page.goto(f"{live_server.url}/explorer/")
    page.fill("#id_title", "Aliasing: two names, one list")
    page.fill("#id_code", ALIAS)
    page.fill("#id_call_input", "f([1, 2])")
    page.click('[data-testid="explore-submit"]')
    page.wait_for_url("**/explorer/t/**")
    steps = Trace.objects.get().trace["steps"]
    _go(page, next(i for i, s in enumerate(steps) if s["function"] == "f" and s["line"] == 12))
    assert page.locator('[data-testid="ex-arrows"] path.ex-arrow').count() >= 4
    assert page.locator(".ex-code li.prev").get_attribute("data-line") == "11"  # not __init__'s last line
    # the instance is told by its attributes, never by its address
    narration = page.locator('[data-testid="ex-narration"]').inner_text()
    assert "now p = Point(x=1, y=[[1, 2]])" in narration and "object at" not in narration, narration
    page.screenshot(path=str(SCREENSHOTS / "explorer-educator.png"), full_page=True)
