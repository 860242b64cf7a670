from __future__ import annotations

from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from webapp.accounts.views import home

# A body over the upload limit names the limit (413); a service that is down is a 503 (webapp/errors.py).
handler400 = "webapp.errors.bad_request"
handler404 = "webapp.errors.not_found"
handler500 = "webapp.errors.server_error"

urlpatterns = [
    path("", home, name="home"),
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("accounts/", include("webapp.accounts.urls")),
    path("problems/", include("webapp.problems.urls")),
    path("explorer/", include("webapp.explorer.urls")),
    path("annotation/", include("webapp.annotation.urls")),
    path("checkpoints/", include("webapp.checkpoints.urls")),
    path("", include("webapp.exercises.urls")),
    path("", include("webapp.runs.urls")),
]
