"""Fixtures of the browser tests: headless Debian Chromium (Playwright), the fake model server, and the
production-mode site (daphne + Celery worker subprocesses on the test database) that talks to it.

Chromium is launched from /usr/bin/chromium (``playwright install`` is never needed); the tests skip,
with the reason, when it or the playwright package is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from simulator.llm.testing import FakeModelServer
from tests.webapp.browser.support import add_one_script, launch_chromium, production_stack

FAKE_MODEL = "fake-model"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with launch_chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeModelServer]:
    """The fake OpenAI-compatible server (a test double of vLLM) on a real socket; tests set its
    ``responder`` and ``delay_s`` (seconds per streamed chunk) for their scenario."""
    server = FakeModelServer(add_one_script(), model=FAKE_MODEL)
    with server.serve() as url:
        server.url = url  # type: ignore[attr-defined]
        yield server


@pytest.fixture(scope="module")
def fake_site(
    django_db_setup: Any, django_db_blocker: Any, fake_model: Any, tmp_path_factory: Any
) -> Iterator[str]:
    """Production mode against the fake model: daphne + ``celery -A webapp worker``, PostgreSQL, Redis."""
    from django.db import connection

    with production_stack(
        connection.settings_dict, fake_model.url, FAKE_MODEL, tmp_path_factory.mktemp("fake-site")
    ) as base:
        yield base


@pytest.fixture(autouse=True)
def _fresh_model_script(request: pytest.FixtureRequest) -> None:
    """Each test starts from the default script and no delay (module-scoped server, per-test state)."""
    if "fake_model" in request.fixturenames:
        server = request.getfixturevalue("fake_model")
        server.responder = add_one_script()
        server.delay_s = 0.0


@pytest.fixture
def page_for(chromium: Any) -> Iterator[Callable[..., Any]]:
    """``page_for(base_url, user=None)``: a fresh browser context and page, logged in as ``user``
    through a real session cookie (None: logged out). Contexts are closed after the test."""
    from django.test import Client

    contexts: list[Any] = []

    def make(base: str, user: Any = None) -> Any:
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        if user is not None:
            client = Client()
            client.force_login(user)
            cookie = client.cookies["sessionid"].value
            context.add_cookies([{"name": "sessionid", "value": cookie, "url": base}])
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.errors = []  # type: ignore[attr-defined]
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))  # type: ignore[attr-defined]
        return page

    yield make
    for context in contexts:
        context.close()
