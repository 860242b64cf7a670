"""Statements are Markdown written by users: render, then sanitise with nh3 (no script, no handlers).
A benchmark's plain-text statement (Code Jam's ``statement_text``, ``extra["statement_format"] ==
"text"``) is shown as written instead: its ``5*2`` and ``x_i`` are not emphasis."""

from __future__ import annotations

import re

import markdown as md
import nh3
from django.utils.html import escape

ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td", "sub", "sup",
}  # fmt: skip


def render_markdown(text: str) -> str:
    html = md.markdown(text, extensions=["fenced_code", "tables"], output_format="html")
    return nh3.clean(
        html, tags=ALLOWED_TAGS, attributes={"a": {"href", "title"}}, link_rel="nofollow noopener"
    )


def render_plain(text: str) -> str:
    """Plain text as HTML: paragraphs at blank lines, its other line breaks kept, every character as is."""
    paragraphs = (escape(p).replace("\n", "<br>") for p in re.split(r"\n\s*\n", text.strip()) if p.strip())
    return "".join(f"<p>{p}</p>" for p in paragraphs)


def render_statement(text: str, extra: dict | None) -> str:
    """A problem's statement as its page shows it: plain text when its source says so, else Markdown."""
    return render_plain(text) if (extra or {}).get("statement_format") == "text" else render_markdown(text)
