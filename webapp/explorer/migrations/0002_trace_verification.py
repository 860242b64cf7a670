"""A saved trace keeps the verification of its model text, made when it is saved (issue 51, item 8:
``webapp.explorer.context.verification_of``); a trace saved before has {} and is verified on its first
view only."""

from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("explorer", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="trace",
            name="verification",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
