"""Sign-up (log-in and log-out are Django's own views, wired in urls.py)."""

from __future__ import annotations

from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from webapp.accounts.forms import SignupForm
from webapp.limits import check_can_sign_up


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        check_can_sign_up(request)  # LimitExceeded: webapp.errors answers 429 with the limit
        user = form.save()
        # Two backends (django-axes' and the model backend): name the one that holds the user.
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("problems:list")
    return render(request, "accounts/signup.html", {"form": form})
