"""Withdraw from the annotation queue the items of pasted programs whose authors did not share them
(issue 51, item 1: ``webapp.annotation.withdraw``)."""

from __future__ import annotations

from django.db import migrations


def withdraw(apps, schema_editor):
    from webapp.annotation.withdraw import withdraw_unshared

    withdraw_unshared(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_item_duplicates"),
        ("runs", "0012_simulation_copied"),
    ]

    operations = [migrations.RunPython(withdraw, migrations.RunPython.noop)]
