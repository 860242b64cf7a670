"""Sign-up and the home page (log-in and log-out are Django's own views, wired in urls.py)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from webapp.accounts.forms import SignupForm
from webapp.accounts.roles import WELCOME, has_role
from webapp.limits import check_can_sign_up


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        check_can_sign_up(request)  # LimitExceeded: webapp.errors answers 429 with the limit
        user = form.save()
        # Two backends (django-axes' and the model backend): name the one that holds the user.
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        role = form.cleaned_data["role"]
        messages.success(
            request, f"Welcome, {user.username}: you are signed up as {role_words(role)}. {WELCOME[role]}"
        )
        return redirect("home")
    return render(request, "accounts/signup.html", {"form": form})


def role_words(role: str) -> str:
    return f"an {role}" if role[:1] in "aeiou" else f"a {role}"


def home(request: HttpRequest) -> HttpResponse:
    """Where "/", a sign-up and a log-in lead: an annotator's work is the annotation queue, an
    educator's the Trace explorer (issue 52), everyone else's (a developer, staff, a visitor) the
    problems."""
    user = request.user
    if has_role(user, "annotator") and not has_role(user, "developer", "educator"):
        return redirect("annotation:queue")
    if has_role(user, "educator") and not has_role(user, "developer"):
        return redirect("explorer:new")
    return redirect("problems:list")
