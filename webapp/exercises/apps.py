from __future__ import annotations

from django.apps import AppConfig


class ExercisesConfig(AppConfig):
    name = "webapp.exercises"
    label = "exercises"
