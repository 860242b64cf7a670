from __future__ import annotations

from django.apps import AppConfig


class CheckpointsConfig(AppConfig):
    name = "webapp.checkpoints"
    label = "checkpoints"
