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
