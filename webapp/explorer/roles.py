"""Role checks for the explorer and annotation pages (roles are the groups of webapp.accounts.roles)."""

from __future__ import annotations

from typing import Any

from webapp.accounts.roles import is_staff


def has_role(user: Any, *roles: str) -> bool:
    """Whether ``user`` is in one of the groups ``roles``; staff count as every role."""
    if not user.is_authenticated:
        return False
    return is_staff(user) or user.groups.filter(name__in=roles).exists()
