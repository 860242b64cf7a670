"""What a newcomer meets first (issue 52, Developer), in Chromium against each mode's site: the example
list starts with problems the small default model can solve and says which ones read input; the problem
editor shows the call each test makes, warns when one argument becomes a tuple and checks an optional
reference solution on every test before saving; run history and the problem list say who solved a
problem (the model, or the user's own program); and the header says the model is starting, or not
answering, instead of a red "down", while the Solve button says why it waits.

The fake model server here can stop answering (``answering``), as a model server that is down; the
embedded site whose model is still starting is ``execsim up`` itself, its vLLM server replaced by the
test double of ``tests/simulator/llm/fake_vllm_server.py`` (slow to get ready), never a real one.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulator.llm.testing import FakeModelServer
from tests.webapp.browser.conftest import FAKE_MODEL
from tests.webapp.browser.flows import create_problem, sign_up, solve, wait_finished, wait_until
from tests.webapp.browser.support import (
    ADD_ONE,
    REPO,
    RIGHT,
    TEST_LIMITS,
    _start,
    add_one_script,
    clean_env,
    free_port,
    stop,
    wait_http,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CALL_EXAMPLES = ["Reverse a string", "Average", "Count vowels"]  # as the default model solves them
STDIN_EXAMPLES = ["Square", "Count up", "Largest number"]
STDIN_LABEL = "reads input: hard for the small default model"
HEADER = '[data-testid="model-status"]'
SOLVE = '[data-testid="solve-submit"]'
NOTE = '[data-testid="solve-model-note"]'


class SwitchableModel(FakeModelServer):
    """The fake model server, which stops answering (as a server that is down) while ``answering`` is
    false: its model list fails, so the site's status check gets no answer."""

    answering = True

    def models_body(self) -> dict[str, Any]:
        if not self.answering:
            raise ConnectionAbortedError("the fake model is down (on purpose)")
        return super().models_body()


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeModelServer]:
    """This module's fake model server (the sites of ``site`` talk to it): one that can go down."""
    server = SwitchableModel(add_one_script(), model=FAKE_MODEL)
    with server.serve() as url:
        server.url = url  # type: ignore[attr-defined]
        yield server
        server.answering = True


def _titles(page: Any) -> list[str]:
    return page.locator('[data-testid="problem-row"] td:first-child a').all_inner_texts()


def _row(page: Any, title: str) -> Any:
    return page.locator('[data-testid="problem-row"]', has=page.locator(f'a:text-is("{title}")'))


def _link(row: Any) -> str:
    return row.locator("td:first-child a").get_attribute("href")


def _assert_clean(page: Any) -> None:
    assert page.errors == [] and page.console_errors == []


def _assert_accessible(page: Any) -> None:
    """axe-core finds nothing wrong with the page as it is now (its warnings and notes shown)."""
    from tests.webapp.browser.test_accessibility import violations

    assert violations(page) == []


# -- the first example ----------------------------------------------------------------------------------


def test_the_first_examples_are_call_problems_and_the_stdin_ones_say_they_read_input(site, page_for):
    if site.mode == "production":  # deployed, the examples are loaded by `manage.py load_examples`
        from webapp.problems.management.commands.load_examples import load_examples

        load_examples(REPO / "examples")
    page = page_for(site)
    sign_up(page, site, "newcomer")  # a newcomer lands on the problem list
    titles = _titles(page)
    assert titles[:3] == CALL_EXAMPLES, titles
    assert set(titles[3:6]) == set(STDIN_EXAMPLES), titles
    for title in STDIN_EXAMPLES:
        assert _row(page, title).locator('[data-testid="problem-label"]').inner_text() == STDIN_LABEL
    for title in CALL_EXAMPLES:
        assert "the default model" in _row(page, title).locator('[data-testid="problem-label"]').inner_text()
    page.click('a:text-is("Square")')
    page.wait_for_selector('[data-testid="problem-title"]')
    assert page.locator('[data-testid="problem-label"]').inner_text() == STDIN_LABEL
    assert "seldom writes a program" in page.locator('[data-testid="stdin-note"]').inner_text()
    _assert_clean(page)


# -- the problem editor -----------------------------------------------------------------------------------

REFERENCE = "def sum_evens(xs):\n    return sum(x for x in xs if x % 2 == 0)\n"


def test_the_editor_shows_each_call_warns_of_a_tuple_and_saves_only_what_the_reference_passes(site, page_for):
    page = page_for(site)
    sign_up(page, site, "editor")
    page.goto(f"{site}/problems/new/")
    page.fill("#id_title", "Sum evens")
    page.fill("#id_statement", "Return the sum of the even numbers of the list `xs`.")
    page.select_option("#id_kind", "call")
    page.fill("#id_entry_point", "sum_evens")
    page.fill("#id_tests-0-input", "[1, 2, 4]")
    page.fill("#id_tests-0-output", "6")
    page.fill("#id_tests-1-input", "([5, 7],)")  # what the help's "argument list" led a user to write
    page.fill("#id_tests-1-output", "0")
    calls = page.locator('[data-testid="test-call"]')
    wait_until(page, "document.querySelectorAll('[data-testid=test-call]')[1]?.textContent.includes('((')")
    assert calls.nth(0).inner_text() == "Calls sum_evens([1, 2, 4])"
    assert calls.nth(1).inner_text() == "Calls sum_evens(([5, 7],))"
    warnings = page.locator('[data-testid="test-tuple-warning"]:visible')
    assert warnings.count() == 1
    warning = warnings.inner_text()
    assert "one argument, a tuple" in warning and "[5, 7]" in warning, warning
    page.fill("#id_entry_point", "total")  # the preview follows the entry point too
    wait_until(page, "document.querySelector('[data-testid=test-call]').textContent.includes('total(')")
    page.fill("#id_entry_point", "sum_evens")

    page.fill("#id_reference", REFERENCE)
    page.click('[data-testid="problem-save"]')
    page.wait_for_selector('[data-testid="reference-failures"]')
    assert page.url.endswith("/problems/new/")  # refused: nothing saved
    failures = page.locator('[data-testid="reference-failures"]').inner_text()
    assert "test 2" in failures and "TypeError" in failures and "test 1" not in failures, failures
    assert page.input_value("#id_reference") == REFERENCE  # kept, to fix the test or the reference
    _assert_accessible(page)  # the tuple warning and the reference's failures shown

    page.fill("#id_tests-1-input", "[5, 7]")
    warned = "document.querySelectorAll('[data-testid=test-tuple-warning]:not([hidden])').length"
    wait_until(page, f"{warned} === 0")
    assert page.locator('[data-testid="test-call"]').nth(1).inner_text() == "Calls sum_evens([5, 7])"
    page.click('[data-testid="problem-save"]')
    page.wait_for_selector('[data-testid="problem-title"]')
    head = page.locator('[data-testid="public-tests"] thead th').all_inner_texts()
    assert head[1] == "Call", head
    cells = page.locator('[data-testid="public-tests"] tbody tr td:nth-child(2)').all_inner_texts()
    assert cells == ["sum_evens([1, 2, 4])", "sum_evens([5, 7])"]
    _assert_clean(page)


# -- who solved it ------------------------------------------------------------------------------------


def test_run_history_and_the_problem_list_say_who_solved_it(site, fake_model, page_for):
    page = page_for(site)
    sign_up(page, site, "solver")
    problem_url = create_problem(page, site, {**ADD_ONE, "title": "Add one, solved"})
    page.goto(problem_url)
    model_run = solve(page, k=2, turns=0, real=True)
    wait_finished(page)
    page.goto(f"{site}/problems/?q=solved")
    standing = _row(page, "Add one, solved").locator('[data-testid="problem-standing"]')
    assert standing.inner_text() == "✓ solved by the model"

    page.goto(f"{site}/simulate/")
    page.fill("#id_code", RIGHT.strip("`").removeprefix("python\n"))
    page.select_option("#id_problem", label="Add one, solved")
    page.click('[data-testid="simulate-submit"]')
    page.wait_for_url("**/runs/*/")
    own_run = page.url
    wait_finished(page)
    page.goto(f"{site}/problems/?q=solved")
    standing = _row(page, "Add one, solved").locator('[data-testid="problem-standing"]')
    assert standing.inner_text() == "✓ solved by the model · ✓ your program passed"

    page.goto(f"{site}/runs/")
    rows = page.locator('[data-testid="run-row"]').all()
    kinds = {_link(row): row.locator('[data-testid="run-kind"]').inner_text() for row in rows}
    path = lambda url: url.removeprefix(site)  # noqa: E731
    assert kinds == {path(model_run): "solve", path(own_run): "simulate my code"}, kinds
    _assert_clean(page)


# -- the model's state ----------------------------------------------------------------------------------


def _header_says(page: Any, words: str, timeout_s: float = 40) -> None:
    wait_until(
        page,
        "([sel, words]) => document.querySelector(sel)?.textContent.includes(words)",
        [HEADER, words],
        timeout_s,
    )


def test_while_the_model_does_not_answer_the_header_says_so_and_solve_waits(site, fake_model, page_for):
    page = page_for(site)
    sign_up(page, site, "waiter")
    problem_url = create_problem(page, site, {**ADD_ONE, "title": "Add one, later"})
    fake_model.answering = False
    try:
        page.wait_for_timeout(6000)  # the status check's cache (5 s) forgets the model was up
        page.goto(problem_url)
        _header_says(page, "not answering")
        header = page.locator(HEADER).inner_text()
        assert " down" not in header, header
        assert page.locator(SOLVE).is_disabled()
        note = page.locator(NOTE)
        assert note.is_visible() and "The model is not answering" in note.inner_text(), note.inner_text()
        assert note.locator('a[href="/status/model/"]').count() == 1
        _assert_accessible(page)  # the disabled Solve and the sentence beside it
        simulate = page_for(site)  # Simulate my code asks the model too: it waits the same way
        simulate.context.add_cookies(page.context.cookies())
        simulate.goto(f"{site}/simulate/")
        assert simulate.locator('[data-testid="simulate-submit"]').is_disabled()
        assert (
            "The model is not answering"
            in simulate.locator('[data-testid="simulate-model-note"]').inner_text()
        )
    finally:
        fake_model.answering = True
    # It answers again: the header's next poll opens Solve, without a reload.
    page.evaluate("window.notReloaded = true")
    _header_says(page, " up")
    wait_until(page, "!document.querySelector('[data-testid=solve-submit]').disabled")
    assert not page.locator(NOTE).is_visible()
    assert page.evaluate("window.notReloaded === true")
    _assert_clean(page)


LAUNCHER = textwrap.dedent(
    """
    # `execsim up` whose model server is a test double: nothing is prepared nor downloaded, and the
    # server started (tests/simulator/llm/fake_vllm_server.py) answers after FAKE_VLLM_DELAY_S seconds.
    import sys
    from pathlib import Path
    from types import SimpleNamespace

    from simulator import config
    from simulator.llm import default_model, server

    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    config.DEFAULT_MODEL_PORT = int(sys.argv[2])
    server.ENTRYPOINT = "fake_vllm_server"
    server.vllm_installed = lambda: True
    default_model.prepare_default = lambda **_: SimpleNamespace(
        name="fake-default", path=folder, merged=None, reason="a test double"
    )
    from simulator.cli import main

    sys.exit(main(["up", "--port", sys.argv[3]]))
    """
)


@pytest.fixture(scope="module")
def starting_embedded(tmp_path_factory: Any) -> Iterator[str]:
    """``execsim up`` starting its own model, as on a CPU: ready about 40 s after it started."""
    work = tmp_path_factory.mktemp("starting-embedded")
    launcher = work / "launcher.py"
    launcher.write_text(LAUNCHER)
    port = free_port()
    fakes = str(REPO / "tests" / "simulator" / "llm")
    env = clean_env(
        EXECSIM_DATA_DIR=str(work / "data"),
        FAKE_VLLM_DELAY_S="40",
        PYTHONPATH=os.pathsep.join([fakes, str(REPO), os.environ.get("PYTHONPATH", "")]),
        **TEST_LIMITS,
    )
    env.pop("EXECSIM_CELERY_QUEUE", None)
    log = work / "up.log"
    args = [str(work / "model"), str(free_port()), str(port)]
    proc = _start([sys.executable, str(launcher), *args], env, log)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/problems/", proc, log, timeout_s=120)
        yield base
    finally:
        stop(proc, grace_s=15)
        if os.environ.get("EXECSIM_BROWSER_LOGS"):
            print(f"--- execsim up ---\n{Path(log).read_text(errors='replace')[-3000:]}")


def test_embedded_mode_says_the_model_it_started_is_starting_and_solve_waits(starting_embedded, page_for):
    """Only embedded mode starts the model (production's header says "not answering", above)."""
    page = page_for(starting_embedded)
    sign_up(page, starting_embedded, "early")
    page.click('a:text-is("Reverse a string")')
    page.wait_for_selector('[data-testid="problem-title"]')
    _header_says(page, "starting (about 3 min)")
    assert page.locator('[data-testid="model-up"]').get_attribute("data-state") == "starting"
    assert page.locator(SOLVE).is_disabled()
    note = page.locator(NOTE)
    assert "The model is starting (about 3 min)" in note.inner_text(), note.inner_text()
    assert note.locator('a[href="/status/model/"]').count() == 1
    # Ready: the header's next poll says so and opens Solve, without a reload.
    _header_says(page, " up", timeout_s=90)
    wait_until(page, "!document.querySelector('[data-testid=solve-submit]').disabled")
    assert not page.locator(NOTE).is_visible()
    _assert_clean(page)
