"""The project's own app: what concerns every app's models (``webapp.text``'s escaping on save)."""

from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import pre_save


class WebappConfig(AppConfig):
    name = "webapp"
    label = "execsim"

    def ready(self) -> None:
        from webapp.text import escape_text_fields

        pre_save.connect(escape_text_fields, dispatch_uid="execsim-storable-text")
