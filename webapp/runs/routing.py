from __future__ import annotations

from django.urls import re_path

from webapp.runs.consumers import RunConsumer

websocket_urlpatterns = [re_path(r"^ws/runs/(?P<run_id>[0-9a-f-]{32,36})/$", RunConsumer.as_asgi())]
