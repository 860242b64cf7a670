from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runs", "0002_execution_turn")]

    operations = [
        migrations.AddField(
            model_name="run",
            name="problem_snapshot",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RenameField(model_name="execution", old_name="divergence", new_name="verification"),
        migrations.AddField(
            model_name="execution",
            name="expected",
            field=models.TextField(blank=True, null=True),
        ),
    ]
