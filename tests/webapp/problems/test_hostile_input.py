"""Input nested too deeply for Python's parser or ``json`` (issue 11, item 9) gets the message at the
field, as any malformed input does, never a 500: the forms and the importer validate through the core."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.webapp.problems.test_problem_views import _form
from webapp.problems.models import Problem

pytestmark = pytest.mark.django_db

LONG_SUM = "1+" * 5000 + "1"


def _upload(client, content: bytes, fmt: str):
    return client.post(
        "/problems/import/", {"file": SimpleUploadedFile("p.json", content), "format": fmt, "is_public": "on"}
    )


@pytest.mark.parametrize("field", ["input", "output"])
def test_it_reports_a_test_too_deeply_nested_on_that_test(client, alice, field: str) -> None:
    client.force_login(alice)
    response = client.post(
        "/problems/new/", _form(kind="call", entry_point="double", **{f"tests-1-{field}": LONG_SUM})
    )
    assert response.status_code == 200
    assert "too deeply nested" in str(response.context["formset"].forms[1].errors[field])
    assert not Problem.objects.filter(title="Double").exists()


def test_it_rejects_an_upload_nested_too_deeply(client, alice) -> None:
    client.force_login(alice)
    response = _upload(client, b"[" * 100_000, "execsim")
    assert response.status_code == 200
    assert response.context["errors"] == ["file: line 1 is not JSON (too deeply nested)"]


def test_it_reports_an_imported_test_too_deeply_nested_and_imports_nothing(client, alice) -> None:
    client.force_login(alice)
    record = {
        "title": "T", "statement": "s", "kind": "call", "entry_point": "f",
        "tests": [{"input": LONG_SUM, "output": "1"}],
    }  # fmt: skip
    response = _upload(client, json.dumps(record).encode(), "execsim")
    assert response.status_code == 200
    assert [e.split(": ", 2)[1] for e in response.context["errors"]] == ["tests[0].input"]
    assert "too deeply nested" in response.context["errors"][0]
    assert not Problem.objects.exists()


def test_an_mbpp_record_whose_asserts_are_too_deep_is_reported_not_a_500(client, alice) -> None:
    client.force_login(alice)
    record = {"task_id": 1, "prompt": "p", "test_list": [f"assert f(1) == {LONG_SUM}"], "code": ""}
    response = _upload(client, json.dumps(record).encode(), "mbpp")
    assert response.status_code == 200
    assert response.context["errors"] == [
        "problem: test_list: no assert of the form `assert f(args) == value`"
    ]
