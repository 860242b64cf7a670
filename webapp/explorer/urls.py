from __future__ import annotations

from django.urls import path

from webapp.explorer import views

app_name = "explorer"
urlpatterns = [
    path("", views.explore_new, name="new"),
    path("runs/<uuid:run_id>/", views.explore_run, name="run"),
    path("t/<str:slug>/", views.explore_view, name="view"),
    path("t/<str:slug>/embed/", views.explore_embed, name="embed"),
]
