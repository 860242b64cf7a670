from __future__ import annotations

from django.urls import re_path

from webapp.exercises.consumers import ExerciseResultsConsumer

websocket_urlpatterns = [
    re_path(r"^ws/exercises/(?P<slug>[A-Za-z0-9_-]{1,40})/results/$", ExerciseResultsConsumer.as_asgi())
]
