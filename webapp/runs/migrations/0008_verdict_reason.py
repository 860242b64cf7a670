from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runs", "0007_repairturn_decided_by_rejected")]

    operations = [
        migrations.AddField(
            model_name="verdict", name="reason", field=models.TextField(blank=True, default="")
        ),
    ]
