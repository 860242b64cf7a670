from __future__ import annotations

from django.urls import path

from webapp.exercises import views

app_name = "exercises"
urlpatterns = [
    path("exercises/", views.exercise_list, name="list"),
    path("exercises/from/<str:slug>/", views.exercise_new, name="new"),
    path("exercises/<str:slug>/edit/", views.exercise_edit, name="edit"),
    path("exercises/<str:slug>/results/", views.exercise_results, name="results"),
    path("exercises/<str:slug>/results.csv", views.exercise_results_csv, name="results_csv"),
    path("x/<str:slug>/", views.exercise_play, name="play"),
    path("x/<str:slug>/embed/", views.exercise_embed, name="embed"),
    path("x/<str:slug>/join/", views.exercise_join, name="join"),
    path("x/<str:slug>/answer/", views.exercise_answer, name="answer"),
]
