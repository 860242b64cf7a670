"""Statements are Markdown written by users: render, then sanitise with nh3 (no script, no handlers)."""

from __future__ import annotations

import markdown as md
import nh3

ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td", "sub", "sup",
}  # fmt: skip


def render_markdown(text: str) -> str:
    html = md.markdown(text, extensions=["fenced_code", "tables"], output_format="html")
    return nh3.clean(
        html, tags=ALLOWED_TAGS, attributes={"a": {"href", "title"}}, link_rel="nofollow noopener"
    )
