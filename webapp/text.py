"""Text that PostgreSQL can store, and text as a browser's form sends it.

Storable text: NUL characters and lone surrogates escaped as Python writes them.

PostgreSQL refuses NUL in ``text`` and ``\\u0000`` in ``jsonb``, and lone surrogates (a program's
undecodable output, a JSON file's ``\\udc80``) cannot be encoded to UTF-8 at all, so a program that
prints ``'A\\x00B'``, a pasted program or an imported title with one failed its save with a database
error. ``storable`` writes each such character as its escape (``\\x00``, ``\\udc80``), which the pages
show as they show any text; nothing else changes, so ordinary text (backslashes included) is stored as
it is. The one ambiguity: a text that already held the four characters ``\\x00`` reads the same.

Applied in one place for every model: ``escape_text_fields`` runs before any model is saved (connected
in ``webapp.apps``), over its character, text and JSON fields. Code that writes rows without ``save``
(``bulk_create``, ``update``) or sends text elsewhere first (the run events' broadcast,
``webapp.runs.record``) calls ``storable`` itself.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.db import models

_ODD = re.compile("[\x00\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return "\\x00" if code == 0 else f"\\u{code:04x}"


def storable(value: Any) -> Any:
    """``value`` with NUL and lone surrogates escaped in every string in it (dict keys too); dicts and
    lists are copied, tuples become lists (as JSON would make them); anything else is returned as is."""
    if isinstance(value, str):
        return _ODD.sub(_escape, value) if _ODD.search(value) else value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


def escape_text_fields(sender: Any, instance: models.Model, **kwargs: Any) -> None:
    """pre_save receiver: make the instance's text, character and JSON field values storable."""
    for field in instance._meta.concrete_fields:
        if isinstance(field, models.CharField | models.TextField | models.JSONField):
            value = getattr(instance, field.attname)
            if value is not None and not isinstance(value, int | float | bool):
                cleaned = storable(value)
                if cleaned != value:
                    setattr(instance, field.attname, cleaned)


def typed(text: str) -> str:
    """Text from a textarea with its line breaks as written: a browser's form submission sends each one
    as CRLF, and the code, inputs and statements a user types would otherwise reach the model (trained on
    LF text, docs/results.md#stdin-problems) and the pages with a carriage return on every line."""
    return text.replace("\r\n", "\n")


class TypedField(forms.CharField):
    """A form field for text typed in a textarea (``typed``); whitespace is kept unless ``strip``."""

    def __init__(self, *, strip: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 3, "class": "mono"}))
        super().__init__(strip=strip, **kwargs)

    def to_python(self, value: Any) -> str:
        return typed(super().to_python(value))
