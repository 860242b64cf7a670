"""An NLEX text as HTML with each checked claim wrapped in a span: its verdict as a class, the trace
step it was held against as ``data-step`` (the explorer jumps there on click), and what the real
execution shows as a tooltip. Where the trace is on another page (the run page), each claim with a step
is a link to that step in the explorer instead, which works without JavaScript. Every piece of text
goes through ``escape``: model output is data.

The explorer and the annotation screens verify the text they show; the run page shows the claims of
the verification stored with a real execution (``claims_in``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from simulator.nlex.verify import ClaimCheck, Verification
from simulator.prompts.simulate import EMPTY_THOUGHT


def _title(mark: ClaimCheck) -> str:
    where = f" at step {mark.step + 1}" if mark.step is not None else ""  # as the explorer counts, from 1
    if mark.verdict == "true":
        return f"right: the real execution agrees{where}"
    if mark.verdict == "false":
        actual = f"; the real execution has {mark.actual}" if mark.actual is not None else ""
        return f"wrong{where}{actual}" + (f" ({mark.reason})" if mark.reason else "")
    return f"not checkable: {mark.reason or 'no matching value in the trace'}"


def shown_from(text: str) -> int:
    """Where a simulation's text is worth showing from on the run page: past the empty thought that a
    reply answering at once opens with, which is the request's prefill, not the model's words (the
    reply as stored, exported and annotated keeps it)."""
    return len(EMPTY_THOUGHT) if text.startswith(EMPTY_THOUGHT) else 0


def marked_html(
    text: str, marks: Iterable[ClaimCheck], link: str | None = None, start: int = 0
) -> SafeString:
    """``text`` from offset ``start`` escaped, with claim spans (overlapping claims: the first one
    wins; one before ``start`` is not shown). ``link``: the explorer URL of this program and input;
    each claim with a step links to ``link&step=N``."""
    out: list[str] = []
    position = start
    first_false_seen = False
    for mark in sorted(marks, key=lambda m: (m.start, m.end)):
        if mark.start < position or mark.end <= mark.start:
            continue
        out.append(escape(text[position : mark.start]))
        classes = f"claim claim-{mark.verdict}"
        if mark.verdict == "false" and not first_false_seen:
            classes += " first-divergence"
            first_false_seen = True
        tag, href = "span", ""
        if link and mark.step is not None:
            tag, href = "a", f' href="{escape(f"{link}&step={mark.step}")}"'
        step = f' data-step="{mark.step}"' if mark.step is not None else ""
        out.append(
            f'<{tag} class="{classes}"{href} data-testid="claim" data-verdict="{mark.verdict}"{step}'
            f' title="{escape(_title(mark))}">{escape(text[mark.start : mark.end])}</{tag}>'
        )
        position = mark.end
    out.append(escape(text[position:]))
    return mark_safe("".join(out))  # noqa: S308 (every piece is escaped above)


def claims_in(text: str, verification: dict[str, Any] | None) -> list[ClaimCheck]:
    """The claims of a stored verification (``Verification.to_dict()``) when it checked this very
    ``text`` (every claim's offsets hold its words); none for another text, such as another sample
    of a run made when several were sampled, whose offsets would mark the wrong words."""
    if not verification or not verification.get("claims"):
        return []
    claims = list(Verification.from_dict(verification).claims)
    return claims if all(text[c.start : c.end] == c.text for c in claims) else []
