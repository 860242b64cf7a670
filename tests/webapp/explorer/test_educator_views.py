"""The explorer pages for educators without a browser: a program that never ends is a flagged partial
trace (not "nothing ran"), objects reach the page's JSON, the presentation and hide-result flags, the
edit-and-trace-again form (logged in only), program values escaped, and the navigation shows only the
screens the viewer's role can open."""

from __future__ import annotations

import json
import re

import pytest
from django.test import override_settings

from webapp.explorer.models import Trace

pytestmark = pytest.mark.django_db

FOREVER = "def spin():\n    n = 0\n    while True:\n        n += 1\n"
OBJECTS = (
    "class Box:\n    def __init__(self):\n        self.items = ['</script><b>x</b>']\n\n\n"
    "def f():\n    b = Box()\n    return b\n"
)


def _payload(page: str) -> dict:
    match = re.search(r'<script id="explorer-data" type="application/json">(.*?)</script>', page, re.S)
    assert match, "no explorer data in the page"
    return json.loads(match.group(1))


def _post(client, code: str, call: str) -> str:
    response = client.post("/explorer/", {"code": code, "mode": "call", "call_input": call})
    assert response.status_code == 302
    return response["Location"]


@override_settings(EXECSIM_EXPLORER_MAX_STEPS=30)
def test_a_program_that_loops_forever_shows_its_first_steps_flagged(client, educator):
    client.force_login(educator)
    page = client.get(_post(client, FOREVER, "spin()")).content.decode()
    trace = Trace.objects.get()
    assert trace.status == "timeout" and trace.step_count == 30
    assert 'data-testid="ex-empty"' not in page and "nothing of the program ran" not in page
    assert 'data-reason="max_steps"' in page and "only the first 30 steps" in page
    assert "then was stopped at its time limit (status <code>timeout</code>)" in page
    data = _payload(page)
    assert len(data["trace"]["steps"]) == 30 and data["trace"]["truncated_reason"] == "max_steps"
    assert data["truncation"].startswith("truncated at 30 steps") and data["sentences"]


def test_objects_reach_the_page_and_program_values_are_escaped(client, educator):
    client.force_login(educator)
    page = client.get(_post(client, OBJECTS, "f()")).content.decode()
    assert "</script><b>x</b>" not in page  # json_script escapes it; the script writes text only
    views = [v for s in _payload(page)["trace"]["steps"] for v in s.get("heap", [])]
    box = next(v for v in views if v["kind"] == "object" and v["items"])
    assert box["type"] == "Box" and box["items"][0][0] == "items"
    inner = next(v for v in views if v["id"] == box["items"][0][1]["ref"])
    assert inner["items"] == [{"repr": "'</script><b>x</b>'", "type": "str"}]


def test_presentation_and_hide_result_are_url_flags(client, educator):
    client.force_login(educator)
    location = _post(client, "def f():\n    return 1\n", "f()")
    plain = client.get(location).content.decode()
    assert 'data-present=""' in plain and 'data-reveal=""' in plain
    hidden = client.get(location + "?present=1&hide=result").content.decode()
    assert 'data-present="1"' in hidden and 'data-reveal="last"' in hidden
    assert 'data-testid="ex-present-exit"' in hidden and 'href="?present=1&amp;hide=result"' in plain


def test_edit_and_trace_again_is_offered_to_logged_in_users_only(client, educator):
    client.force_login(educator)
    location = _post(client, "def f(x):\n    return x * 2\n", "f(4)")
    page = client.get(location).content.decode()
    assert 'data-testid="ex-edit-form"' in page and 'action="/explorer/"' in page
    assert "return x * 2" in page and 'value="f(4)"' not in page  # the call is in its textarea
    again = client.post(
        "/explorer/", {"code": "def f(x):\n    return x * 3\n", "mode": "call", "call_input": "f(4)"}
    )
    assert Trace.objects.count() == 2 and again["Location"] != location
    client.logout()
    anonymous = client.get(location).content.decode()
    assert 'data-testid="ex-edit"' not in anonymous and 'data-testid="ex-step"' in anonymous
    embed = client.get(location + "embed/").content.decode()
    assert 'data-testid="ex-edit"' not in embed


def test_the_navigation_links_annotation_only_for_annotators(client, educator, ann1):
    client.force_login(educator)
    assert 'data-testid="nav-annotation"' not in client.get("/explorer/").content.decode()
    client.force_login(ann1)
    assert 'data-testid="nav-annotation"' in client.get("/explorer/").content.decode()


def test_a_program_that_prints_without_end_keeps_its_steps_and_says_so(client, educator):
    client.force_login(educator)
    code = "def spam():\n    while True:\n        print('x' * 100000)\n"
    page = client.get(_post(client, code, "spam()")).content.decode()
    trace = Trace.objects.get()
    assert trace.status == "output_limit" and trace.step_count > 3
    assert 'data-reason="output_limit"' in page and "stopped for printing too much" in page
    assert 'data-testid="ex-empty"' not in page


def test_a_newcomer_is_told_what_the_explorer_is_and_offered_programs_to_try(client, educator):
    client.force_login(educator)
    page = client.get("/explorer/").content.decode()
    assert 'data-testid="welcome"' in page and "imagining how its own code" in page
    assert page.count('data-testid="example"') == 3
    filled = client.get("/explorer/?example=recursion").content.decode()
    assert "fact(4)" in filled and "return n * fact(n - 1)" in filled
    client.post("/explorer/", {"code": "def f():\n    return 1\n", "mode": "call", "call_input": "f()"})
    assert 'data-testid="welcome"' not in client.get("/explorer/").content.decode()  # no longer new
