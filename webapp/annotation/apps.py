from __future__ import annotations

from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "webapp.annotation"
    label = "annotation"
