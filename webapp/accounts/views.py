"""Sign-up (log-in and log-out are Django's own views, wired in urls.py)."""

from __future__ import annotations

from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from webapp.accounts.forms import SignupForm


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("problems:list")
    return render(request, "accounts/signup.html", {"form": form})
