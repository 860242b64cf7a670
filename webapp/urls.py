from __future__ import annotations

from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="problems:list", permanent=False)),
    path("accounts/", include("webapp.accounts.urls")),
    path("problems/", include("webapp.problems.urls")),
    path("explorer/", include("webapp.explorer.urls")),
    path("annotation/", include("webapp.annotation.urls")),
    path("checkpoints/", include("webapp.checkpoints.urls")),
    path("", include("webapp.runs.urls")),
]
