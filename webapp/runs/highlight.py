"""Server-side syntax highlighting (Pygments) and diffs (difflib) for code written by the model.

Pygments escapes every token, so model output can never inject markup through here.
"""

from __future__ import annotations

import difflib

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer, PythonLexer

_FORMATTER = HtmlFormatter(nowrap=False, cssclass="hl")


def python_html(code: str) -> SafeString:
    if not code:
        return mark_safe("")
    return mark_safe(highlight(code, PythonLexer(), _FORMATTER))  # noqa: S308 (pygments escapes)


def unified_diff(before: str, after: str, before_name: str = "before", after_name: str = "after") -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), before_name, after_name
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def diff_html(before: str, after: str, before_name: str = "before", after_name: str = "after") -> SafeString:
    diff = unified_diff(before, after, before_name, after_name)
    if not diff:
        return mark_safe(f'<p class="muted">{escape("(no change)")}</p>')
    return mark_safe(highlight(diff, DiffLexer(), _FORMATTER))  # noqa: S308


def stylesheet() -> str:
    return _FORMATTER.get_style_defs(".hl")
