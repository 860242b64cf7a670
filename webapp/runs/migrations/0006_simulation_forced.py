from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runs", "0005_candidate_finish_reason")]

    operations = [
        migrations.AddField(model_name="simulation", name="forced", field=models.BooleanField(default=False)),
    ]
