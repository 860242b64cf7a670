"""Who may do what: the roles a user can hold, as Django groups (created by a data migration), and the
checks every view and template asks (``is_staff``, ``has_role``, ``role_required``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

ROLES = ("developer", "educator", "annotator", "staff")
SELF_SERVICE_ROLES = ("developer", "educator", "annotator")  # staff is granted, not chosen
# What each role is for, as the sign-up form says it (issue 52: the select alone said nothing).
ROLE_HELP = {
    "developer": "let the model solve a problem (or one of your own) and see where its imagined run of "
    "its code went wrong; simulate your own code",
    "educator": "step through any Python program line by line in the Trace explorer, as in Python Tutor, "
    "and share, embed or present the trace to a class",
    "annotator": "correct the model's simulated traces where the real run contradicts them, in the "
    "annotation queue",
}
# Said once, on the page a new account lands on (the explanation the logged-out pages give goes away).
WELCOME = {
    "developer": "ExecSim shows a small code model solving programming problems by imagining how its own "
    "code runs, and checks each imagined step against the real run. Pick a problem below and press "
    "Solve, or write your own with New problem.",
    "educator": "The Trace explorer below is where you start: paste a program, step through it, share it.",
    "annotator": "The queue below lists the model's traces waiting for a person: open one, fix what the real "
    "run contradicts, accept or reject.",
}


def is_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff see every problem and run: Django staff or a member of the 'staff' group."""
    if not user.is_authenticated:
        return False
    return bool(user.is_staff or user.is_superuser or user.groups.filter(name="staff").exists())


def has_role(user: AbstractBaseUser | AnonymousUser, *roles: str) -> bool:
    """Whether ``user`` is in one of the groups ``roles``; staff count as every role."""
    if not user.is_authenticated:
        return False
    return is_staff(user) or user.groups.filter(name__in=roles).exists()


def role_required(*roles: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A view for users in one of ``roles`` (staff always): the logged-out go to the login page, others
    get a 403 page that names the roles."""

    def wrap(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @wraps(view)
        def inner(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not has_role(request.user, *roles):
                return render(request, "accounts/forbidden.html", {"roles": roles}, status=403)
            return view(request, *args, **kwargs)

        return inner

    return wrap
