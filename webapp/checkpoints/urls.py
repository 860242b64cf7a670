from __future__ import annotations

from django.urls import path

from webapp.checkpoints import views

app_name = "checkpoints"
urlpatterns = [
    path("", views.checkpoint_list, name="list"),
    path("<str:name>/", views.checkpoint_detail, name="detail"),
]
