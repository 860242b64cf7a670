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


# An indented line, its words one or two spaces apart (a figure aligns with more)
_WRAPPED_LINE = re.compile(r"[ \t]+\S+(?:\s{1,2}\S+)*")


def _unwrap(paragraph: str) -> str:
    """A paragraph as its HTML page showed it. Code Jam's 2008 statements keep the page source's line
    breaks, every line indented; a browser joined those lines, so they are joined here. A paragraph with
    a line at the margin (a sample) or aligned by spaces (a figure), or without a line of four words
    and a word of letters (a grid, a matrix), keeps its breaks."""
    lines = paragraph.strip("\n").rstrip().split("\n")
    prose = any(len(line.split()) >= 4 for line in lines) and re.search("[A-Za-z]{2}", paragraph)
    wrapped = len(lines) > 1 and prose and all(_WRAPPED_LINE.fullmatch(line) for line in lines)
    return " ".join(line.strip() for line in lines) if wrapped else paragraph


def render_plain(text: str) -> str:
    """Plain text as HTML: paragraphs at blank lines, their other line breaks kept (but for wrapped
    prose, ``_unwrap``), every character as is."""
    paragraphs = (
        escape(_unwrap(p)).replace("\n", "<br>") for p in re.split(r"\n\s*\n", text.strip()) if p.strip()
    )
    return "".join(f"<p>{p}</p>" for p in paragraphs)


def render_statement(text: str, extra: dict | None) -> str:
    """A problem's statement as its page shows it: plain text when its source says so, else Markdown."""
    return render_plain(text) if (extra or {}).get("statement_format") == "text" else render_markdown(text)
