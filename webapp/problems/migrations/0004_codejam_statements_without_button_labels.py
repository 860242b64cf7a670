"""Code Jam problems imported before the site's copy-button labels ("save_alt", "content_copy",
"Copied!", scraped into every sample) were left out of their statements (``simulator.benchmarks``
``ICON_LINES``, copied here as it was when this migration was written) lose them."""

from __future__ import annotations

import re

from django.db import migrations

ICON_LINES = re.compile(r"(?:\n[ \t]*)*\n[ \t]*(?:save_alt|content_copy|Copied!)[ \t]*(?=\n|$)")


def clean(apps, schema_editor):  # noqa: ARG001
    Problem = apps.get_model("problems", "Problem")
    for problem in Problem.objects.filter(source="codejam", statement__contains="content_copy"):
        if problem.extra.get("benchmark") == "codejam":
            problem.statement = ICON_LINES.sub("", problem.statement)
            problem.save(update_fields=["statement"])


class Migration(migrations.Migration):
    dependencies = [("problems", "0003_typed_line_breaks")]
    operations = [migrations.RunPython(clean, migrations.RunPython.noop)]
