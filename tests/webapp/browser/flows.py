"""What a user does in the browser, as small steps the browser tests share (Playwright sync API)."""

from __future__ import annotations

import re
import time
from typing import Any

from tests.webapp.browser.support import ADD_ONE, SCREENSHOTS

DONE = ("finished", "failed", "cancelled")


def sign_up(
    page: Any, base: str, username: str, password: str = "a-Long-pass-4321", role: str = "developer"
) -> None:
    """Sign up with ``role``; a developer lands on the problem list, an educator on the explorer."""
    page.goto(f"{base}/accounts/signup/")
    page.fill("#id_username", username)
    page.fill("#id_password1", password)
    page.fill("#id_password2", password)
    page.select_option("#id_role", role)
    page.click('[data-testid="signup-submit"]')
    page.wait_for_url(f"{base}/explorer/" if role == "educator" else f"{base}/problems/")
    assert page.locator('[data-testid="nav-user"]').inner_text() == username


def create_problem(page: Any, base: str, problem: dict[str, Any] = ADD_ONE) -> str:
    """Fill the New problem form (call kind), every test of ``problem`` (Add test for those past the
    two blank ones the form shows); returns the problem page's URL."""
    page.goto(f"{base}/problems/")
    page.click('[data-testid="new-problem"]')
    page.fill("#id_title", problem["title"])
    page.fill("#id_statement", problem["statement"])
    page.select_option("#id_kind", "call")
    page.fill("#id_entry_point", problem["entry_point"])
    for i, (given, expected, public) in enumerate(problem["tests"]):
        if i >= 2:
            page.click('[data-testid="add-test"]')
            page.wait_for_selector(f"#id_tests-{i}-input")
        page.fill(f"#id_tests-{i}-input", given)
        page.fill(f"#id_tests-{i}-output", expected)
        page.set_checked(f"#id_tests-{i}-public", public)
    page.click('[data-testid="problem-save"]')
    page.wait_for_selector('[data-testid="problem-title"]')
    assert page.locator('[data-testid="problem-title"]').inner_text() == problem["title"]
    return page.url


def solve(
    page: Any,
    k: int = 2,
    turns: int = 1,
    real: bool = False,
    max_tokens: int | None = None,
    narrate: bool | None = None,
) -> str:
    """Submit the Solve form on the problem page (``narrate``: None leaves the form's default, on);
    returns the run page's URL."""
    page.locator('[data-testid="more-settings"]').evaluate("details => { details.open = true; }")
    page.fill("#id_k", str(k))
    page.fill("#id_turns", str(turns))
    if narrate is not None:
        page.set_checked("#id_narrate", narrate)
    page.fill("#id_seed", "7")
    if max_tokens is not None:
        page.fill("#id_max_tokens", str(max_tokens))
    page.set_checked("#id_real", real)
    page.click('[data-testid="solve-submit"]')
    page.wait_for_url("**/runs/*/")
    return page.url


def wait_status(page: Any, statuses: tuple[str, ...] = DONE, timeout_s: float = 60) -> str:
    """Wait until the live page (no reload) shows one of ``statuses``; returns it."""
    selector = ", ".join(f'[data-testid="run-status"][data-status="{s}"]' for s in statuses)
    page.wait_for_selector(selector, timeout=timeout_s * 1000)
    return page.locator('[data-testid="run-status"]').get_attribute("data-status")


def wait_until(page: Any, expression: str, arg: Any = None, timeout_s: float = 30) -> None:
    """Wait until the JavaScript ``expression`` (or function of ``arg``) is true in the page.

    Not ``page.wait_for_function``: after its first check it polls with ``eval`` inside the page, which
    the site's Content-Security-Policy forbids (``script-src 'self'``), so it failed whenever the
    condition was not already true. ``page.evaluate`` runs over the DevTools protocol, outside the CSP."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression, arg):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {expression}")
        page.wait_for_timeout(50)


def wait_text(page: Any, selector: str, min_chars: int = 1, timeout_s: float = 30) -> str:
    """Wait until the element has at least ``min_chars`` characters of text (streamed in)."""
    wait_until(
        page,
        "([sel, n]) => { const e = document.querySelector(sel); return !!e && e.textContent.length >= n; }",
        [selector, min_chars],
        timeout_s,
    )
    return page.locator(selector).text_content()


def header_counts(page: Any) -> tuple[int, int] | None:
    """(queued, running) as the header's model status shows them; None before it has loaded."""
    match = re.search(
        r"(\d+) queued, (\d+) running", page.locator('[data-testid="model-status"]').inner_text()
    )
    return (int(match.group(1)), int(match.group(2))) if match else None


def wait_header_counts(page: Any, counts: tuple[int, int], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while header_counts(page) != counts:
        if time.monotonic() > deadline:
            raise AssertionError(f"the header shows {header_counts(page)}, not {counts} (queued, running)")
        page.wait_for_timeout(100)


def run_export(page: Any, run_url: str) -> dict[str, Any]:
    """The run's Export JSON, fetched with the page's session (works in either mode: the run lives in
    the site's own database)."""
    response = page.request.get(f"{run_url.rstrip('/')}/export.json")
    assert response.ok, response.status
    return response.json()


def recorded_text(export: dict[str, Any], candidate: int) -> str:
    """The reply the run recorded for ``candidate`` (its candidate_done event)."""
    return next(
        e["payload"]["text"]
        for e in export["events"]
        if e["type"] == "candidate_done" and e["payload"]["candidate"] == candidate
    )


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def wait_finished(page: Any, timeout_s: float = 60) -> None:
    """Wait for the end of the run and require "finished" (else fail with the page's error text)."""
    status = wait_status(page, timeout_s=timeout_s)
    if status != "finished":
        error = page.locator('[data-testid="run-error"]')
        message = error.inner_text() if error.count() else "(no error shown)"
        raise AssertionError(f"the run ended {status}: {message}")
