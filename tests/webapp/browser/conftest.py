"""Fixtures of the browser tests: headless Debian Chromium (Playwright), the fake model server, and the
two sites that talk to it: production mode (daphne + Celery worker subprocesses on the test database)
and embedded mode (``execsim up``: SQLite in a data directory, the in-process runner). ``site`` runs a
test against each; its users and runs live in that site's own database (sign up through the page).

Chromium is launched from /usr/bin/chromium (``playwright install`` is never needed); the tests skip,
with the reason, when it or the playwright package is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from simulator.llm.testing import FakeModelServer
from tests.webapp.browser.support import (
    TEST_LIMITS,
    add_one_script,
    embedded_server,
    launch_chromium,
    production_stack,
)

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


@pytest.fixture(scope="module")
def fake_embedded(fake_model: Any, tmp_path_factory: Any) -> Iterator[str]:
    """Embedded mode against the fake model: ``execsim up`` in a fresh data directory (SQLite, the
    in-process runner and channel layer), with the tests' limits."""
    data = tmp_path_factory.mktemp("fake-embedded") / "data"
    with embedded_server(data, fake_model.url, FAKE_MODEL, **TEST_LIMITS) as base:
        yield base


class Site(str):
    """A site's base URL (no trailing /) that also says its mode: "production" or "embedded"."""

    mode: str


@pytest.fixture(scope="module", params=["production", "embedded"])
def site(request: pytest.FixtureRequest) -> Site:
    """The test runs once against each mode's site (both against the fake model)."""
    base = Site(request.getfixturevalue("fake_site" if request.param == "production" else "fake_embedded"))
    base.mode = request.param
    return base


@pytest.fixture(autouse=True)
def _fresh_model_script(request: pytest.FixtureRequest) -> None:
    """Each test starts from the default script and no delay (module-scoped server, per-test state)."""
    if "fake_model" in request.fixturenames:
        server = request.getfixturevalue("fake_model")
        server.responder = add_one_script()
        server.delay_s = 0.0


@pytest.fixture
def annotator_user(django_user_model: Any) -> Any:
    """An annotator in the test database (production mode's site shares it)."""
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user("ann1", password="pw-ann1-123")
    user.groups.add(Group.objects.get_or_create(name="annotator")[0])
    return user


@pytest.fixture
def page_for(chromium: Any) -> Iterator[Callable[..., Any]]:
    """``page_for(base_url, user=None)``: a fresh browser context and page, logged in as ``user``
    through a real session cookie of the test database (None: logged out; production mode only).
    ``page.errors`` collects uncaught exceptions, ``page.console_errors`` the console's errors (htmx
    logs there, e.g. an out-of-band fragment without a target). Contexts are closed after the test."""
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
        page.console_errors = console = []  # type: ignore[attr-defined]
        page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
        return page

    yield make
    for context in contexts:
        context.close()
