from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runs", "0006_simulation_forced")]

    operations = [
        migrations.AddField(
            model_name="repairturn", name="decided_by", field=models.CharField(default="model", max_length=20)
        ),
        migrations.AddField(
            model_name="repairturn", name="rejected", field=models.JSONField(blank=True, null=True)
        ),
    ]
