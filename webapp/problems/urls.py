from __future__ import annotations

from django.urls import path

from webapp.problems import views

app_name = "problems"
urlpatterns = [
    path("", views.problem_list, name="list"),
    path("new/", views.problem_edit, name="create"),
    path("import/", views.problem_import, name="import"),
    path("<int:pk>/", views.problem_detail, name="detail"),
    path("<int:pk>/edit/", views.problem_edit, name="edit"),
    path("<int:pk>/problem.json", views.problem_export, name="export"),
]
