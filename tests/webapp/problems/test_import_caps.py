"""How many problems one import and one user may make (issue 51, item 11: one 5 MB upload made 10,000
public problems in 15 s): an import holds at most ``EXECSIM_MAX_IMPORT_RECORDS`` records, refused
before any is converted, and a user owns at most ``EXECSIM_MAX_PROBLEMS_PER_USER`` problems, imported
or written in the editor; a refusal says which limit and imports nothing."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import override_settings

from tests.webapp.problems.test_problem_views import _form
from webapp.problems.models import Problem

pytestmark = pytest.mark.django_db


def _records(n: int, prefix: str = "P") -> bytes:
    return "\n".join(
        json.dumps({"title": f"{prefix}{i}", "statement": "s", "tests": [{"input": "", "output": ""}]})
        for i in range(n)
    ).encode()


def _upload(client, content: bytes):
    form = {"file": SimpleUploadedFile("p.jsonl", content), "format": "execsim", "is_public": "on"}
    return client.post("/problems/import/", form)


def test_the_defaults_fit_the_benchmarks_and_bound_what_one_user_makes():
    assert settings.EXECSIM_MAX_IMPORT_RECORDS == 1000  # CRUXEval (800) and MBPP (974) in one file each
    assert settings.EXECSIM_MAX_PROBLEMS_PER_USER == 5000


@override_settings(EXECSIM_MAX_IMPORT_RECORDS=3)
def test_an_upload_over_the_record_limit_is_refused_before_any_record_is_converted(client, alice):
    client.force_login(alice)
    with mock.patch("webapp.problems.importers.convert") as convert:
        response = _upload(client, _records(4))
    assert response.status_code == 200
    assert response.context["errors"] == [
        "file: holds 4 records; one import takes at most 3: split the file into smaller ones"
    ]
    assert not convert.called and not Problem.objects.exists()
    assert _upload(client, _records(3)).status_code == 302
    assert Problem.objects.count() == 3


@override_settings(EXECSIM_MAX_PROBLEMS_PER_USER=3)
def test_an_import_that_would_pass_the_users_limit_imports_nothing(client, alice, bob):
    Problem.objects.create(owner=alice, title="Own 1", statement="s")
    Problem.objects.create(owner=alice, title="Own 2", statement="s")
    client.force_login(alice)
    response = _upload(client, _records(2))
    assert response.status_code == 200
    assert response.context["errors"] == [
        "You own 2 problems and this import would add 2: the limit is 3 problems per user. "
        "Delete some first, or ask the site's staff to raise it."
    ]
    assert Problem.objects.filter(owner=alice).count() == 2
    assert _upload(client, _records(1)).status_code == 302  # one fits
    client.force_login(bob)  # the limit is each user's own
    assert _upload(client, _records(3)).status_code == 302


@override_settings(EXECSIM_MAX_PROBLEMS_PER_USER=1)
def test_the_editor_refuses_a_new_problem_past_the_users_limit(client, alice):
    Problem.objects.create(owner=alice, title="Own", statement="s")
    client.force_login(alice)
    response = client.post("/problems/new/", _form())
    assert response.status_code == 200
    assert "the limit is 1 problem per user" in " ".join(response.context["form"].non_field_errors())
    assert Problem.objects.count() == 1
    mine = Problem.objects.get()  # editing one's own problems is never refused
    assert client.get(f"/problems/{mine.pk}/edit/").status_code == 200


@override_settings(EXECSIM_MAX_IMPORT_RECORDS=2, EXECSIM_MAX_PROBLEMS_PER_USER=3)
def test_the_command_keeps_the_limits_and_names_the_setting_that_raises_them(tmp_path, alice):
    path = tmp_path / "p.jsonl"
    path.write_bytes(_records(3))
    with pytest.raises(CommandError) as error:
        call_command("import_problems", str(path), "--format", "execsim", "--owner", "alice")
    assert "holds 3 records; one import takes at most 2" in str(error.value)
    assert "EXECSIM_MAX_IMPORT_RECORDS" in str(error.value)
    path.write_bytes(_records(2))
    Problem.objects.create(owner=alice, title="Own", statement="s")
    Problem.objects.create(owner=alice, title="Own 2", statement="s")
    with pytest.raises(CommandError) as error:
        call_command("import_problems", str(path), "--format", "execsim", "--owner", "alice")
    assert "the limit is 3 problems per user" in str(error.value)
    assert "EXECSIM_MAX_PROBLEMS_PER_USER" in str(error.value)
    assert Problem.objects.count() == 2
