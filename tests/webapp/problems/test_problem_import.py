"""Importing problems: the CLI's JSON format and the benchmark formats of ../shared/benchmarks."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from webapp.problems.models import Problem

pytestmark = pytest.mark.django_db

BENCHMARKS = Path(__file__).resolve().parents[3].parent / "shared" / "benchmarks"
needs_benchmarks = pytest.mark.skipif(not BENCHMARKS.is_dir(), reason=f"no benchmark data at {BENCHMARKS}")


def _upload(client, content: bytes, fmt: str, name: str = "p.json", **fields: str):
    form = {"file": SimpleUploadedFile(name, content), "format": fmt, "is_public": "on", **fields}
    return client.post("/problems/import/", form, follow=bool(fields))


def test_it_imports_a_problem_in_the_cli_format(client, alice):
    client.force_login(alice)
    data = {
        "title": "Echo",
        "statement": "Echo it.",
        "kind": "stdin",
        "tests": [{"input": "a\n", "output": "a\n"}],
    }
    response = _upload(client, json.dumps(data).encode(), "execsim")
    problem = Problem.objects.get(title="Echo")
    assert response.status_code == 302 and response["Location"] == f"/problems/{problem.pk}/"
    assert problem.source == "execsim" and problem.tests.count() == 1


def test_it_reports_errors_by_field_and_imports_nothing(client, alice):
    client.force_login(alice)
    good = {"title": "A", "statement": "s", "tests": [{"input": "", "output": ""}]}
    bad = {"title": "B", "statement": "s", "tests": [{"input": 1, "output": ""}]}
    response = _upload(client, (json.dumps(good) + "\n" + json.dumps(bad)).encode(), "execsim")
    assert response.status_code == 200
    assert response.context["errors"] == ["record 2: tests[0].input: must be a string"]
    assert not Problem.objects.exists()


def test_asked_to_it_skips_the_records_that_cannot_be_imported_and_says_which(client, alice):
    client.force_login(alice)
    good = {"title": "A", "statement": "s", "tests": [{"input": "", "output": ""}]}
    bad = {"title": "B", "statement": "s", "tests": [{"input": 1, "output": ""}]}
    content = (json.dumps(good) + "\n" + json.dumps(bad)).encode()
    page = _upload(client, content, "execsim").content.decode()
    assert "1 record could be, and these cannot" in page and not Problem.objects.exists()
    response = _upload(client, content, "execsim", skip_bad="on")
    assert list(Problem.objects.values_list("title", flat=True)) == ["A"]
    page = response.content.decode()
    assert "Imported 1 problem(s)." in page
    assert "Skipped 1 record(s) that cannot be imported: record 2: tests[0].input: must be a string." in page


@needs_benchmarks
def test_the_mbpp_dev_file_imports_but_for_its_asserts_of_another_shape(client, alice):
    """8 of its 170 records assert `set(f(x)) == ...` or `f(x)` alone, which a test's value cannot state."""
    client.force_login(alice)
    content = (BENCHMARKS / "mbpp/sanitized-dev.jsonl").read_bytes()
    assert _upload(client, content, "mbpp").context["importable"] == 162
    assert not Problem.objects.exists()
    page = _upload(client, content, "mbpp", skip_bad="on").content.decode()
    assert Problem.objects.count() == 162 and "Skipped 8 record(s)" in page
    assert "record 103: test_list: no assert of the form" in page


def test_it_rejects_a_file_that_is_not_json(client, alice):
    client.force_login(alice)
    response = _upload(client, b"{not json", "execsim")
    assert response.context["errors"] == [
        "file: line 1 is not JSON (Expecting property name enclosed in double quotes)"
    ]


@needs_benchmarks
@pytest.mark.parametrize(
    ("fmt", "path", "line", "kind"),
    [
        ("cruxeval", "cruxeval/dev.jsonl", 0, "call"),
        # MBPP's first record compares set(...) of the call, which a test's value cannot state
        ("mbpp", "mbpp/sanitized-dev.jsonl", 1, "call"),
        ("codejam", "codejam/dev.jsonl", 0, "stdin"),
    ],
)
def test_it_imports_a_benchmark_record(client, alice, fmt, path, line, kind):
    client.force_login(alice)
    record = (BENCHMARKS / path).read_text().splitlines()[line]
    response = _upload(client, record.encode(), fmt, "one.jsonl")
    assert response.status_code == 302, response.context["errors"]
    problem = Problem.objects.get()
    assert problem.kind == kind and problem.source == fmt
    assert problem.tests.filter(public=True).exists()


@needs_benchmarks
def test_it_imports_code_jam_with_private_tests_and_tolerance(client, alice):
    client.force_login(alice)
    record = json.loads((BENCHMARKS / "codejam/dev.jsonl").read_text().splitlines()[0])
    _upload(client, json.dumps(record).encode(), "codejam")
    problem = Problem.objects.get()
    assert problem.tests.filter(public=False).count() == len(record["private_tests"])
    assert problem.float_tolerance == pytest.approx(1e-6)


def test_it_reads_a_gzipped_file(client, alice):
    """A benchmark file can be larger than an upload may be; gzipped it fits (Code Jam dev: 10 MB, 3 MB)."""
    client.force_login(alice)
    records = [{"title": t, "statement": "s", "tests": [{"input": "", "output": ""}]} for t in "AB"]
    content = gzip.compress("\n".join(json.dumps(r) for r in records).encode())
    response = _upload(client, content, "execsim", "p.jsonl.gz")
    assert response.status_code == 302
    assert sorted(Problem.objects.values_list("title", flat=True)) == ["A", "B"]


@override_settings(EXECSIM_MAX_IMPORT_BYTES=1000)
def test_a_gzipped_file_that_expands_past_the_limit_is_refused(client, alice):
    """A gzip bomb: 1,004 bytes that would unpack to a megabyte are unpacked no further than the limit."""
    client.force_login(alice)
    response = _upload(client, gzip.compress(b" " * 1_000_000), "execsim", "bomb.gz")
    assert response.context["errors"] == [
        "file: expands to more than 1,000 bytes, the limit for an unpacked file"
    ]
    assert not Problem.objects.exists()


def test_a_broken_gzip_file_says_so(client, alice):
    client.force_login(alice)
    response = _upload(client, gzip.compress(b'{"title": "A"}')[:15], "execsim", "cut.gz")
    assert response.context["errors"] == ["file: is not a valid gzip file"]


@needs_benchmarks
def test_the_whole_code_jam_dev_file_imports_gzipped(client, alice):
    client.force_login(alice)
    content = gzip.compress((BENCHMARKS / "codejam/dev.jsonl").read_bytes())
    response = _upload(client, content, "codejam", "dev.jsonl.gz", skip_bad="on")
    assert response.status_code == 200, response.context["errors"]
    records = len((BENCHMARKS / "codejam/dev.jsonl").read_text().splitlines())
    assert 0 < Problem.objects.count() <= records
    assert f"Imported {Problem.objects.count()} problem(s)." in response.content.decode()


def test_uploading_a_file_again_adds_only_what_is_new_in_it(client, alice, bob):
    client.force_login(alice)
    records = [{"title": t, "statement": "s", "tests": [{"input": "", "output": ""}]} for t in "AB"]
    _upload(client, json.dumps(records[0]).encode(), "execsim", "a.json")
    _upload(client, "\n".join(json.dumps(r) for r in records).encode(), "execsim", "ab.jsonl")
    assert sorted(Problem.objects.values_list("title", flat=True)) == ["A", "B"]
    page = client.get("/problems/").content.decode()  # the message shows on the page the import leads to
    assert "Imported 1 problem(s). 1 you had imported already (same source, same title or record id)" in page
    _upload(client, json.dumps(records[1]).encode(), "execsim", "b.json")
    page = client.get("/problems/").content.decode()  # nothing new: told plainly, not as a success
    assert '<li class="msg info">Imported 0 problem(s). 1 you had imported already' in page
    client.force_login(bob)  # another user's import of the same file is theirs
    _upload(client, json.dumps(records[0]).encode(), "execsim", "a.json")
    assert Problem.objects.filter(title="A").count() == 2


@needs_benchmarks
def test_a_benchmark_record_imported_under_an_older_title_is_not_imported_again(client, alice):
    """MBPP problems were titled "MBPP 3" before they said what they ask: the record id still matches."""
    client.force_login(alice)
    record = (BENCHMARKS / "mbpp/sanitized-dev.jsonl").read_text().splitlines()[1]
    _upload(client, record.encode(), "mbpp", "one.jsonl")
    old = Problem.objects.get()
    old.title = f"MBPP {old.extra['id']}"  # as session 26's import titled it
    old.save()
    _upload(client, record.encode(), "mbpp", "one.jsonl")
    assert list(Problem.objects.all()) == [old]
    assert "1 you had imported already" in client.get("/problems/").content.decode()
