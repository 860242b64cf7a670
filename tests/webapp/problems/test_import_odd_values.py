"""Imported values Python cannot take as they are (issue 51, item 14): a lone surrogate in a call
test's input or output (Python source cannot hold one), a ``float_tolerance`` of 5,000 digits (past
``int``'s 4,300-digit limit) or past any float. Each is an error naming the record and the field, and
nothing is imported; a lone surrogate in a stdin test's text is stored escaped, as any text's is."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from webapp.problems.models import Problem

pytestmark = pytest.mark.django_db

HUGE = "1" * 5000


def _call_problem(**test: str) -> dict:
    return {
        "title": "T", "statement": "s", "kind": "call", "entry_point": "f",
        "tests": [{"input": "1", "output": "2", **test}],
    }  # fmt: skip


def _upload(client, content: bytes):
    form = {"file": SimpleUploadedFile("p.json", content), "format": "execsim", "is_public": "on"}
    return client.post("/problems/import/", form)


@pytest.mark.parametrize("field", ["input", "output"])
def test_a_lone_surrogate_in_a_call_test_is_an_error_at_its_field(client, alice, field):
    client.force_login(alice)
    record = _call_problem(**{field: "'a\udc80'"})
    response = _upload(client, json.dumps(record).encode())  # JSON writes it \udc80
    assert response.status_code == 200
    [error] = response.context["errors"]
    assert (
        error.startswith(f"problem: tests[0].{field}: ") and "lone surrogate" in error and "\\udc80" in error
    )
    assert not Problem.objects.exists()


def test_a_lone_surrogate_in_a_stdin_test_is_stored_escaped(client, alice):
    client.force_login(alice)
    record = {"title": "T", "statement": "s", "tests": [{"input": "", "output": "a\udc80\n"}]}
    assert _upload(client, json.dumps(record).encode()).status_code == 302
    assert Problem.objects.get().tests.get().output == "a\\udc80\n"


@pytest.mark.parametrize(
    "tolerance", [HUGE, f"{HUGE}.5", "1e400", "-1e400", "NaN", "Infinity", "1e7", "true", "-0.5"]
)
def test_a_float_tolerance_that_is_no_finite_number_in_range_is_an_error_at_its_field(
    client, alice, tolerance
):
    client.force_login(alice)
    text = json.dumps(_call_problem())[:-1] + f', "float_tolerance": {tolerance}}}'
    other = json.dumps({"title": "U", "statement": "s", "tests": [{"input": "", "output": ""}]})
    response = _upload(client, f"{other}\n{text}".encode())
    assert response.status_code == 200
    assert response.context["errors"] == [
        "record 2: float_tolerance: must be a finite number from 0 to 1,000,000"
    ]
    assert not Problem.objects.exists()


def test_a_sane_float_tolerance_imports(client, alice):
    client.force_login(alice)
    text = json.dumps({**_call_problem(), "float_tolerance": 1e-6})
    assert _upload(client, text.encode()).status_code == 302
    assert Problem.objects.get().float_tolerance == 1e-6


def test_a_5000_digit_number_elsewhere_in_a_record_is_read_not_a_500(client, alice):
    client.force_login(alice)
    text = json.dumps(_call_problem())[:-1] + f', "extra_field": {HUGE}}}'
    assert _upload(client, text.encode()).status_code == 302
