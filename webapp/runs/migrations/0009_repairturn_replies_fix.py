from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runs", "0008_verdict_reason")]

    operations = [
        migrations.AddField(
            model_name="repairturn", name="replies", field=models.JSONField(blank=True, default=list)
        ),
        migrations.AddField(
            model_name="repairturn", name="fix", field=models.IntegerField(blank=True, null=True)
        ),
    ]
