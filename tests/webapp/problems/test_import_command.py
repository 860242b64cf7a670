"""``manage.py import_problems``: the import page's work for files over the upload limit."""

from __future__ import annotations

import gzip
import json

import pytest
from django.core.management import CommandError, call_command

from webapp.problems.models import Problem

pytestmark = pytest.mark.django_db

GOOD = {"title": "A", "statement": "s", "tests": [{"input": "", "output": ""}]}
BAD = {"title": "B", "statement": "s", "tests": [{"input": 1, "output": ""}]}


def _file(tmp_path, *records, gzipped=False):
    content = "\n".join(json.dumps(r) for r in records).encode()
    path = tmp_path / ("p.jsonl.gz" if gzipped else "p.jsonl")
    path.write_bytes(gzip.compress(content) if gzipped else content)
    return str(path)


def test_it_imports_a_gzipped_file_for_the_owner_named(tmp_path, alice):
    message = call_command("import_problems", _file(tmp_path, GOOD, gzipped=True), "--format", "execsim",
                           "--owner", "alice", "--private")  # fmt: skip
    problem = Problem.objects.get()
    assert message == "For alice: Imported 1 problem(s)."
    assert problem.owner == alice and not problem.is_public and problem.source == "execsim"


def test_one_bad_record_and_nothing_is_imported_unless_asked_to_skip(tmp_path, alice, capsys):
    path = _file(tmp_path, GOOD, BAD)
    with pytest.raises(CommandError) as error:
        call_command("import_problems", path, "--format", "execsim", "--owner", "alice")
    assert "record 2: tests[0].input: must be a string" in str(error.value)
    assert "1 record(s) could be imported: give --skip-bad" in str(error.value)
    assert not Problem.objects.exists()
    call_command("import_problems", path, "--format", "execsim", "--owner", "alice", "--skip-bad")
    assert list(Problem.objects.values_list("title", flat=True)) == ["A"]
    assert "Skipped 1 record(s)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--owner", "nobody"], "no user named 'nobody'"),
        (["--owner", "alice", "--missing"], "cannot read"),
    ],
)
def test_usage_errors_say_what_is_wrong(tmp_path, alice, argv, message):
    path = str(tmp_path / "none.jsonl") if "--missing" in argv else _file(tmp_path, GOOD)
    argv = [a for a in argv if a != "--missing"]
    with pytest.raises(CommandError, match=message):
        call_command("import_problems", path, "--format", "execsim", *argv)
    assert not Problem.objects.exists()
