from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("runs", "0004_execution_message")]

    operations = [
        migrations.AddField(
            model_name="candidate", name="finish_reason", field=models.CharField(blank=True, max_length=20)
        ),
    ]
