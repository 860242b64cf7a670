"""Claim marks in HTML: escaped text, one span per claim with its verdict and step."""

from __future__ import annotations

from simulator.nlex.verify import ClaimCheck as ClaimMark
from webapp.explorer.marks import marked_html


def test_claims_are_wrapped_and_everything_is_escaped():
    text = "<b>x = 1</b> and y = 2"
    marks = [
        ClaimMark(start=3, end=8, kind="value", text="x = 1", verdict="true", step=4),
        ClaimMark(start=17, end=22, kind="value", text="y = 2", verdict="false", step=6, actual="3"),
        ClaimMark(start=18, end=20, kind="value", text="overlap", verdict="false"),  # overlapping: dropped
    ]
    html = str(marked_html(text, marks))
    assert html.startswith('&lt;b&gt;<span class="claim claim-true"')
    assert 'data-step="4"' in html and 'data-step="6"' in html
    assert 'class="claim claim-false first-divergence"' in html and "the real execution has 3" in html
    assert html.count('data-testid="claim"') == 2 and "<b>" not in html
