"""The roles a user can hold, as Django groups (created by a data migration)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

ROLES = ("developer", "educator", "annotator", "staff")
SELF_SERVICE_ROLES = ("developer", "educator", "annotator")  # staff is granted, not chosen


def is_staff(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff see every problem and run: Django staff or a member of the 'staff' group."""
    if not user.is_authenticated:
        return False
    return bool(user.is_staff or user.is_superuser or user.groups.filter(name="staff").exists())
