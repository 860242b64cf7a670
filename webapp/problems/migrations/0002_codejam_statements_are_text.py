"""Code Jam problems imported before their statements were marked plain text (``extra
["statement_format"] = "text"``, simulator/benchmarks.py) get the mark, so "5*2" is not emphasis."""

from __future__ import annotations

from django.db import migrations


def mark(apps, schema_editor):  # noqa: ARG001
    Problem = apps.get_model("problems", "Problem")
    for problem in Problem.objects.filter(source="codejam"):
        if problem.extra.get("benchmark") == "codejam" and "statement_format" not in problem.extra:
            problem.extra["statement_format"] = "text"
            problem.save(update_fields=["extra"])


class Migration(migrations.Migration):
    dependencies = [("problems", "0001_initial")]
    operations = [migrations.RunPython(mark, migrations.RunPython.noop)]
