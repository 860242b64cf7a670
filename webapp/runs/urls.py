from __future__ import annotations

from django.urls import path

from webapp.runs import views

app_name = "runs"
urlpatterns = [
    path("problems/<int:pk>/solve/", views.solve, name="solve"),
    path("runs/", views.run_list, name="list"),
    path("runs/<uuid:run_id>/", views.run_detail, name="detail"),
    path("runs/<uuid:run_id>/cancel/", views.run_cancel, name="cancel"),
    path("runs/<uuid:run_id>/retry/", views.run_retry, name="retry"),
    path("runs/<uuid:run_id>/real/", views.run_real, name="real"),
    path("runs/<uuid:run_id>/export.json", views.run_export, name="export"),
    path("share/<str:token>/", views.run_share, name="share"),
    path("simulate/", views.simulate, name="simulate"),
    path("status/model/", views.model_status, name="model_status"),
]
