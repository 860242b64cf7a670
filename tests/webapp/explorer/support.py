"""Shared by the explorer and annotation tests: a finished run with one candidate and two simulations
created through the ORM (a real model run needs a server), annotator personas, and a headless
Chromium (Playwright) logged in as a given user."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.webapp.browser.support import launch_chromium

ADD_ONE = "def add_one(x):\n    y = x + 1\n    return y\n"
RIGHT_1 = (
    "[THOUGHT] add_one is called with x = 1. y becomes 2. It returns 2. [/THOUGHT]\n"
    "[ANSWER] assert add_one(1) == 2 [/ANSWER]"
)
WRONG_5 = (
    "[THOUGHT] add_one is called with x = 5. y becomes 7. It returns 7. [/THOUGHT]\n"
    "[ANSWER] assert add_one(5) == 7 [/ANSWER]"
)
FIXED_5 = WRONG_5.replace("7", "6")


@pytest.fixture
def sim_run(make_run: Any) -> Any:
    """A finished run of the "Add one" problem: candidate 0 is right; its simulation of test 0 is
    right, of test 1 wrong (claims y becomes 7)."""
    from webapp.runs.models import Candidate, Simulation

    run = make_run(status="finished", provenance={"model": "smollm2-test"})
    Candidate.objects.create(run=run, index=0, code=ADD_ONE, done=True)
    Simulation.objects.create(run=run, candidate=0, test=0, text=RIGHT_1, predicted="2", done=True)
    Simulation.objects.create(run=run, candidate=0, test=1, text=WRONG_5, predicted="7", done=True)
    return run


def _user(django_user_model: Any, name: str, *groups: str) -> Any:
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user(name, password=f"pw-{name}-123")
    for group in groups:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


@pytest.fixture
def ann1(django_user_model: Any) -> Any:
    return _user(django_user_model, "ann1", "annotator")


@pytest.fixture
def ann2(django_user_model: Any) -> Any:
    return _user(django_user_model, "ann2", "annotator")


@pytest.fixture
def educator(django_user_model: Any) -> Any:
    return _user(django_user_model, "edna", "educator")


@pytest.fixture
def browser() -> Iterator[Any]:
    with launch_chromium() as instance:
        yield instance


@pytest.fixture
def page_as(browser: Any, live_server: Any) -> Callable[..., Any]:
    """``page_as(user)``: a page whose session is ``user``'s (None: logged out)."""
    from django.test import Client

    contexts = []

    def make(user: Any = None, **options: Any) -> Any:
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, **options)
        contexts.append(context)
        if user is not None:
            client = Client()
            client.force_login(user)
            cookie = client.cookies["sessionid"]
            context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": live_server.url}])
        page = context.new_page()
        page.set_default_timeout(15_000)
        return page

    yield make
    for context in contexts:
        context.close()
