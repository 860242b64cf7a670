"""The project's own app: what concerns every app: the models' text (``webapp.text``'s escaping on save)
and the settings (``webapp.checks``)."""

from __future__ import annotations

from django.apps import AppConfig
from django.core.checks import register
from django.db.models.signals import pre_save


class WebappConfig(AppConfig):
    name = "webapp"
    label = "execsim"

    def ready(self) -> None:
        from webapp.checks import check_settings
        from webapp.text import escape_text_fields

        pre_save.connect(escape_text_fields, dispatch_uid="execsim-storable-text")
        register(check_settings)
