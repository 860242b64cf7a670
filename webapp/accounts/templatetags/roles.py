"""``{{ user|has_role:"annotator" }}`` in templates: the same role check the views use, so a page links
only to screens its viewer's role can open (base.html's navigation)."""

from __future__ import annotations

from typing import Any

from django import template

from webapp.accounts.roles import has_role as _has_role

register = template.Library()


@register.filter
def has_role(user: Any, role: str) -> bool:
    """Whether ``user`` has ``role`` (staff have every role)."""
    return _has_role(user, role)
