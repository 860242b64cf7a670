from __future__ import annotations

from django.apps import AppConfig


class ExplorerConfig(AppConfig):
    name = "webapp.explorer"
    label = "explorer"
