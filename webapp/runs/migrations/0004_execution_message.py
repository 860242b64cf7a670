from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runs", "0003_run_snapshot_verification")]

    operations = [
        migrations.AddField(model_name="execution", name="message", field=models.TextField(blank=True)),
    ]
