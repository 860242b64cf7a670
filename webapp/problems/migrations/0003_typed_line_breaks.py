"""Problems typed in the browser before its CRLF line breaks were read as LF (``webapp.text.typed``):
their statements and tests get LF line breaks, as the model and the sandbox now receive new ones."""

from __future__ import annotations

from django.db import migrations
from django.db.models import Q


def to_lf(apps, schema_editor):  # noqa: ARG001
    Problem = apps.get_model("problems", "Problem")
    TestCase = apps.get_model("problems", "TestCase")
    for problem in Problem.objects.filter(statement__contains="\r\n"):
        problem.statement = problem.statement.replace("\r\n", "\n")
        problem.save(update_fields=["statement"])
    for test in TestCase.objects.filter(Q(input__contains="\r\n") | Q(output__contains="\r\n")):
        test.input = test.input.replace("\r\n", "\n")
        test.output = test.output.replace("\r\n", "\n")
        test.save(update_fields=["input", "output"])


class Migration(migrations.Migration):
    dependencies = [("problems", "0002_codejam_statements_are_text")]
    operations = [migrations.RunPython(to_lf, migrations.RunPython.noop)]
