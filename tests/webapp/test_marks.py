"""Claim marks in HTML: escaped text, one span per claim with its verdict and step."""

from __future__ import annotations

from simulator.nlex.verify import ClaimCheck as ClaimMark
from webapp.marks import claims_in, marked_html, shown_from


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


def test_with_a_link_each_claim_with_a_step_links_to_that_step():
    text = "x = 1 so y = 2"
    marks = [
        ClaimMark(start=0, end=5, kind="value", text="x = 1", verdict="true", step=4),
        ClaimMark(start=9, end=14, kind="value", text="y = 2", verdict="unverifiable"),  # no step: no link
    ]
    html = str(marked_html(text, marks, link="/explorer/r/?candidate=0&test=1"))
    assert '<a class="claim claim-true" href="/explorer/r/?candidate=0&amp;test=1&amp;step=4"' in html
    assert '<span class="claim claim-unverifiable"' in html and html.count("href=") == 1


def test_the_claims_of_a_stored_verification_fit_only_the_text_it_checked():
    text = "x = 1 so y = 2"
    claim = {"start": 0, "end": 5, "kind": "value", "text": "x = 1", "verdict": "true", "step": 4}
    stored = {"status": "checked", "answer": {"verdict": "true"}, "claims": [claim]}
    assert [c.step for c in claims_in(text, stored)] == [4]
    assert claims_in("x = 2 so y = 2", stored) == []  # another sample's text: its offsets mean nothing
    assert claims_in(text, None) == [] and claims_in(text, {"status": "no_trace"}) == []


def test_an_answer_at_once_is_shown_from_the_models_words():
    """The empty thought a reply answering at once opens with is the request's prefill: the run page
    starts past it; the answer's claim is still marked."""
    text = "[THOUGHT]\n[/THOUGHT]\n[ANSWER]\nassert f('abc') == ['c', 'b', 'a']"
    answer = text.index("['c'")
    mark = ClaimMark(start=answer, end=len(text), kind="answer", text=text[answer:], verdict="false", step=2)
    html = str(marked_html(text, [mark], start=shown_from(text)))
    assert html.startswith("[ANSWER]\nassert f(&#x27;abc&#x27;) == <span") and "THOUGHT" not in html
    assert shown_from("[THOUGHT]\nf is called") == 0  # a narration is shown whole
