"""Template helpers for run pages: highlighted code, diffs, pretty JSON (all escaped)."""

from __future__ import annotations

import json
from typing import Any

from django import template
from django.utils.safestring import SafeString

from webapp.runs.highlight import diff_html as _diff_html
from webapp.runs.highlight import python_html as _python_html

register = template.Library()


@register.filter
def python_html(code: str | None) -> SafeString:
    return _python_html(code or "")


@register.simple_tag
def diff_html(before: str | None, after: str | None) -> SafeString:
    return _diff_html(before or "", after or "", "previous", "repaired")


@register.filter
def test_name(index: int) -> str:
    """``{{ i|test_name }}``: the run's one name for test ``i`` (``Run.test_label``)."""
    from webapp.runs.models import Run

    return Run.test_label(int(index))


@register.filter
def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)
