"""Data migrations of the problems app, run on rows as an older version saved them."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from webapp.problems.models import Problem
from webapp.problems.models import TestCase as ProblemTest

pytestmark = pytest.mark.django_db


def test_problems_typed_before_line_breaks_were_read_as_lf_get_them(alice):
    to_lf = importlib.import_module("webapp.problems.migrations.0003_typed_line_breaks").to_lf
    typed = Problem.objects.create(title="Typed", statement="Read n.\r\n\r\nPrint 2n.", owner=alice)
    ProblemTest.objects.create(problem=typed, input="4\r\n5\r\n", output="8\r\n", public=True)
    kept = Problem.objects.create(title="Kept", statement="a\rb", owner=alice)  # a lone CR is text
    ProblemTest.objects.create(problem=kept, input="1\n", output="2\n", public=True)
    to_lf(apps, None)
    typed.refresh_from_db()
    kept.refresh_from_db()
    assert typed.statement == "Read n.\n\nPrint 2n." and kept.statement == "a\rb"
    assert [(t.input, t.output) for t in typed.tests.all()] == [("4\n5\n", "8\n")]
    assert [(t.input, t.output) for t in kept.tests.all()] == [("1\n", "2\n")]


def test_code_jam_statements_imported_with_the_sites_button_labels_lose_them(alice):
    migration = "webapp.problems.migrations.0004_codejam_statements_without_button_labels"
    clean = importlib.import_module(migration)
    text = "Sample Input\n\n   save_alt\n\n   content_copy\n\n   Copied!\n\n2\n"
    extra = {"benchmark": "codejam", "statement_format": "text"}
    imported = Problem.objects.create(title="Sum", statement=text, owner=alice, source="codejam", extra=extra)
    typed = Problem.objects.create(title="Mine", statement=text, owner=alice)  # not a benchmark's: as written
    clean.clean(apps, None)
    imported.refresh_from_db()
    typed.refresh_from_db()
    assert imported.statement == "Sample Input\n\n2\n" and typed.statement == text
