"""An NLEX text as HTML with each checked claim wrapped in a span: its verdict as a class, the trace
step it was held against as ``data-step`` (the explorer jumps there on click), and what the real
execution shows as a tooltip. Every piece of text goes through ``escape``: model output is data."""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from simulator.nlex.verify import ClaimCheck


def _title(mark: ClaimCheck) -> str:
    where = f" at step {mark.step}" if mark.step is not None else ""
    if mark.verdict == "true":
        return f"right: the real execution agrees{where}"
    if mark.verdict == "false":
        actual = f"; the real execution has {mark.actual}" if mark.actual is not None else ""
        return f"wrong{where}{actual}" + (f" ({mark.reason})" if mark.reason else "")
    return f"not checkable: {mark.reason or 'no matching value in the trace'}"


def marked_html(text: str, marks: Iterable[ClaimCheck]) -> SafeString:
    """``text`` escaped, with claim spans (overlapping claims: the first one wins)."""
    out: list[str] = []
    position = 0
    first_false_seen = False
    for mark in sorted(marks, key=lambda m: (m.start, m.end)):
        if mark.start < position or mark.end <= mark.start:
            continue
        out.append(escape(text[position : mark.start]))
        classes = f"claim claim-{mark.verdict}"
        if mark.verdict == "false" and not first_false_seen:
            classes += " first-divergence"
            first_false_seen = True
        step = f' data-step="{mark.step}"' if mark.step is not None else ""
        out.append(
            f'<span class="{classes}" data-testid="claim" data-verdict="{mark.verdict}"{step}'
            f' title="{escape(_title(mark))}">{escape(text[mark.start : mark.end])}</span>'
        )
        position = mark.end
    out.append(escape(text[position:]))
    return mark_safe("".join(out))  # noqa: S308 (every piece is escaped above)
