"""Issue 52, "What a newcomer meets", the annotator's and staff's items, without a browser: the word
diff matches sentences first and keeps a number whole; each one-click fix names its claim; a false
claim with no value to use offers to remove its sentence; the queue-settings report; the agreement
figures' n and annotator pairs; the export filters."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from simulator.execution.program import Program
from simulator.nlex.verify import verify_program
from webapp.annotation.corrections import (
    apply_fix,
    changed_words,
    claim_edits,
    sentence_removals,
    sentence_span,
    value_fixes,
    word_diff,
)

# add_one(1) gives 2.0; the model says 3 three times, and narrates line 4, which never runs (the
# browser tests' item: tests/webapp/annotation/test_annotation_newcomer_browser.py).
FLOAT_CODE = "def add_one(x):\n    y = x + 1.0\n    if y < 0:\n        y = 0\n    return y\n"
HALLUCINATED = "Line 4: y is reset to zero.\n"
FLOAT_TEXT = (
    "[THOUGHT] add_one is called with x = 1.\nLine 2: y becomes 3.\n"
    + HALLUCINATED
    + "Line 5: it returns 3. "
    "[/THOUGHT]\n[ANSWER] assert add_one(1) == 3 [/ANSWER]"
)
FLOAT_FIXED = FLOAT_TEXT.replace(HALLUCINATED, "").replace(" 3", " 2.0")


def _changes(original: str, edited: str) -> list[tuple[str, str]]:
    chunks = word_diff(original, edited)
    assert "".join(c.text for c in chunks if c.op != "ins") == original
    assert "".join(c.text for c in chunks if c.op != "del") == edited
    return [(c.op, c.text) for c in chunks if c.op != "same"]


def test_a_replaced_value_is_one_change_beside_a_removed_line():
    """Issue 52: "2.0" after the struck-out "3" was "2", "." and "0", the "." matched with the full
    stop of the line removed next to it, so "0" showed a line below, after the removed line."""
    original = "Line 2: y becomes 3.\nLine 4: y is reset to zero.\nLine 5: it returns 3."
    edited = "Line 2: y becomes 2.0.\nLine 5: it returns 3."
    assert _changes(original, edited) == [
        ("del", "3"),
        ("ins", "2.0"),
        ("del", "Line 4: y is reset to zero.\n"),
    ]


def test_a_sentence_removed_from_a_line_is_removed_whole():
    original = "x = 1. Line 2: x < 0 is false. Line 3: x is still 1. Line 4: y becomes 3. Done."
    edited = "x = 1. Line 2: x < 0 is false. Line 4: y becomes 2.0. Done."
    assert _changes(original, edited) == [("del", "Line 3: x is still 1. "), ("del", "3"), ("ins", "2.0")]
    assert changed_words(word_diff(original, edited)) == 9  # "Line 3 : x is still 1 ." and 3 -> 2.0


def test_numbers_are_one_token_and_a_full_stop_stays_its_own():
    assert _changes("It returns 7.", "It returns 6.") == [("del", "7"), ("ins", "6")]
    assert _changes("It returns 3.", "It returns 2.5.") == [("del", "3"), ("ins", "2.5")]
    assert _changes("a = 1.5", "a = 1.25") == [("del", "1.5"), ("ins", "1.25")]


def test_a_rewritten_text_is_still_diffed_word_by_word():
    original = "The loop runs. i is 1. Then i is 2."
    edited = "The loop ends. i is 1. Then i is 3. Done."
    assert _changes(original, edited) == [
        ("del", "runs"),
        ("ins", "ends"),
        ("del", "2"),
        ("ins", "3"),
        ("ins", " Done."),
    ]


def _checked(text: str) -> Any:
    return verify_program(text, Program(code=FLOAT_CODE, call="add_one(1)"))[0]


def test_each_value_fix_names_its_claim_and_where_it_is(sandbox):
    fixes = value_fixes(FLOAT_TEXT, _checked(FLOAT_TEXT))
    assert [(f.label, f.line, f.claimed, f.value) for f in fixes] == [
        ("“y becomes 3”", 2, "3", "2.0"),
        ("“returns 3”", 5, "3", "2.0"),
        ("the answer “assert add_one(1) == 3”", None, "3", "2.0"),  # by its line: its claim is "3"
    ]
    for fix in fixes:  # the span the page lights up is the claim's, holding the value replaced
        assert fix.claim_start <= fix.start < fix.end <= fix.claim_end


def test_a_line_that_never_ran_is_offered_for_removal_sentence_and_all(sandbox):
    check = _checked(FLOAT_TEXT)
    [removal] = sentence_removals(FLOAT_TEXT, check)
    assert removal.claimed == HALLUCINATED and removal.why == "line 4 does not run here"
    assert removal.label == "“Line 4: y is reset to zero.”"
    assert FLOAT_TEXT[removal.claim_start : removal.claim_end] == "Line 4"
    assert apply_fix(FLOAT_TEXT, removal) == FLOAT_TEXT.replace(HALLUCINATED, "")
    # a claim has one edit at most: its index names it
    indexes = [edit.index for edit in claim_edits(FLOAT_TEXT, check)]
    assert len(indexes) == len(set(indexes)) == 4


def test_no_removal_for_the_answer_or_a_value_the_trace_can_fix(sandbox):
    text = FLOAT_TEXT.replace(HALLUCINATED, "")
    assert sentence_removals(text, _checked(text)) == []  # three wrong values, each with its fix
    assert sentence_removals(FLOAT_FIXED, _checked(FLOAT_FIXED)) == []


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("x = 1. Line 3: x is 1. Line 4: y.", "x = 1. Line 4: y."),
        ("x = 1.\nLine 3: x is 1.\nLine 4: y.", "x = 1.\nLine 4: y."),
        ("x = 1.\nLine 3: y = 0\nLine 4: y.", "x = 1.\nLine 4: y."),  # no full stop: to the line's end
        ("[THOUGHT] Line 3: y = 2.0 here. [/THOUGHT]", "[THOUGHT] [/THOUGHT]"),  # 2.0 ends nothing
        ("x = 1. Line 3 runs![/THOUGHT]", "x = 1. [/THOUGHT]"),
    ],
)
def test_a_sentence_is_what_removing_it_takes(text: str, left: str):
    at = text.index("Line 3")
    start, end = sentence_span(text, at, at + 6)
    assert text[:start] + text[end:] == left


def _textarea(page: str) -> str:
    return html.unescape(re.search(r'data-testid="review-text"[^>]*>(.*?)</textarea>', page, re.S).group(1))


@pytest.mark.django_db(transaction=True)
def test_remove_this_sentence_works_without_javascript(client, sandbox, make_run, ann1):
    from webapp.annotation.enqueue import enqueue_run
    from webapp.annotation.models import Annotation, AnnotationItem
    from webapp.runs.models import Candidate, Simulation

    run = make_run(status="finished", provenance={"model": "smollm2-test"})
    Candidate.objects.create(run=run, index=0, code=FLOAT_CODE, done=True)
    Simulation.objects.create(run=run, candidate=0, test=0, text=FLOAT_TEXT, predicted="3", done=True)
    enqueue_run(run)
    item = AnnotationItem.objects.get()
    client.force_login(ann1)
    page = client.post(f"/annotation/items/{item.pk}/", follow=True).content.decode()
    assert page.count('data-testid="remove-sentence"') == 1 and "line 4 does not run here" in page
    assert (
        'aria-describedby="claim-fix-' in page
        and 'in <span class="claim-name">“returns 3”</span> (line 5)' in page
    )
    number = re.search(r'value="(\d+)" class="fix" data-testid="remove-sentence"', page).group(1)
    page = client.post(
        f"/annotation/items/{item.pk}/fix/", {"text": FLOAT_TEXT, "fix": number}
    ).content.decode()
    assert _textarea(page) == FLOAT_TEXT.replace(HALLUCINATED, "")
    assert 'data-testid="remove-sentence"' not in page and not Annotation.objects.exists()


def _copy_of(run: Any, make_run: Any, **provenance: Any) -> Any:
    """Another run with ``run``'s candidates and simulations (queued: duplicates, for the same model)."""
    from webapp.runs.models import Candidate, Simulation

    copy = make_run(status="finished", provenance={**run.provenance, **provenance})
    for candidate in run.candidates.all():
        Candidate.objects.create(run=copy, index=candidate.index, code=candidate.code, done=True)
    for sim in run.simulations.all():
        fields = {"candidate": sim.candidate, "test": sim.test, "text": sim.text, "predicted": sim.predicted}
        Simulation.objects.create(run=copy, done=True, **fields)
    return copy


@pytest.mark.django_db(transaction=True)
def test_the_queue_settings_report_counts_what_the_queue_lists(sandbox, make_run, sim_run, ann1, carol):
    """Issue 52: "20 queued item(s) updated" while the queue listed 10: the duplicates set aside (which
    the queue does not list) were counted as queued items."""
    from webapp.annotation import queue
    from webapp.annotation.enqueue import enqueue_run
    from webapp.annotation.models import Annotation, AnnotationItem

    enqueue_run(sim_run)
    enqueue_run(_copy_of(sim_run, make_run))  # the same texts: two duplicates
    right, wrong = AnnotationItem.objects.exclude(status=AnnotationItem.DUPLICATE).order_by(
        "simulation__test"
    )
    queue.claim(right, ann1)
    queue.submit(right, ann1, Annotation.ACCEPT, right.text)
    queue.adjudicate(wrong, carol, Annotation.REJECT, wrong.text, None)
    report = queue.set_policy("", 2, None)
    assert (report.listed, report.updated, report.adjudicated, report.duplicates) == (2, 1, 1, 2)
    assert report.moved == {("done", "open"): 1}
    assert report.summary() == (
        "Queue every model: 2 annotations per item, claims last 10 min (the site's). 1 of its 2 items take "
        "them (1 adjudicated item keeps staff's decision): 1 done item reopened for more annotations. "
        "2 duplicates set aside (not listed) follow their originals."
    )
    assert (
        queue.set_policy("", 2, 5)
        .summary()
        .endswith(": no status changed. 2 duplicates set aside (not listed) follow their originals.")
    )
    # a model with settings of its own is left out of the default's count, and said to be
    enqueue_run(_copy_of(sim_run, make_run, model="other-model"))
    queue.set_policy("other-model", 1, None)
    report = queue.set_policy("", 1, None)
    assert report.listed == 2 and report.own_queues == 1
    assert "(models without settings of their own; 1 has theirs)" in report.summary()
    assert (
        queue.set_policy("nobody", 1, 3)
        .summary()
        .endswith("No item queued yet: items added later take these settings.")
    )


@pytest.mark.django_db(transaction=True)
def test_the_agreement_page_gives_its_n_a_caution_and_the_pairs(client, sandbox, sim_run, ann1, ann2, carol):
    from webapp.annotation import queue
    from webapp.annotation.enqueue import enqueue_run
    from webapp.annotation.models import AnnotationItem
    from webapp.annotation.stats import overall_agreement

    enqueue_run(sim_run, required=2)
    client.force_login(ann1)
    page = client.get("/annotation/agreement/").content.decode()
    assert 'data-testid="no-sample"' in page and 'data-testid="small-sample"' not in page
    right, wrong = AnnotationItem.objects.order_by("simulation__test")
    for item, first, second in ((right, "accept", "reject"), (wrong, "reject", "accept")):
        for user, decision in ((ann1, first), (ann2, second)):
            queue.claim(item, user)
            queue.submit(item, user, decision, item.text)
    overall = overall_agreement(AnnotationItem.objects.prefetch_related("annotations__annotator"))
    assert overall["items"] == 2 and overall["small_sample"] and overall["decision_alpha"] == -0.5
    assert overall["annotators"] == ["ann1", "ann2"]
    [(first, cells), _] = overall["pairs"]
    assert first == "ann1" and cells[0]["agreement"] is None
    assert (cells[1]["agreement"].units, cells[1]["agreement"].agreed) == (2, 0)
    page = client.get("/annotation/agreement/").content.decode()
    assert 'data-testid="small-sample"' in page and "from 2 items annotated twice or more" in page
    assert 'data-testid="decision-n">2 items<' in page and 'data-pair="ann2 ann1">0%' in page


@pytest.mark.django_db(transaction=True)
def test_the_export_filters_on_the_page_its_download_and_the_command(
    client, sandbox, sim_run, make_run, ann1, carol, tmp_path
):
    import io
    import json
    from datetime import timedelta

    from django.core.management import CommandError, call_command
    from django.utils import timezone

    from webapp.annotation import queue
    from webapp.annotation.enqueue import enqueue_run
    from webapp.annotation.models import Annotation, AnnotationItem

    enqueue_run(sim_run)
    enqueue_run(_copy_of(sim_run, make_run, model="other-model"))
    for item in AnnotationItem.objects.order_by("id"):
        queue.claim(item, ann1)
        queue.submit(item, ann1, Annotation.ACCEPT, item.text)  # test 0 verified, test 1 not
    today = timezone.localdate().isoformat()
    client.force_login(ann1)
    assert client.get("/annotation/export/").status_code == 403
    client.force_login(carol)
    page = client.get("/annotation/export/").content.decode()
    assert "<b>2 records</b> match verified, every queue." in page
    page = client.get("/annotation/export/", {"status": "all", "model": "other-model"}).content.decode()
    assert "<b>2 records</b> match all, queue other-model." in page
    assert "--status all --model other-model" in page
    page = client.get(
        "/annotation/export/", {"status": "all", "since": today, "until": today}
    ).content.decode()
    assert f"<b>4 records</b> match all, every queue, decided from {today} to {today}." in page
    bad = client.get("/annotation/export/", {"since": "yesterday"})
    assert bad.status_code == 400 and "since must be a date (YYYY-MM-DD)" in bad.content.decode()
    response = client.get("/annotation/export.jsonl", {"status": "unverified", "model": "smollm2-test"})
    [record] = [json.loads(line) for line in response.content.decode().splitlines()]
    assert record["model"] == "smollm2-test" and record["verification"]["verified"] is False
    assert record["decided_at"].startswith(today)
    assert "annotations-unverified-smollm2-test.jsonl" in response["Content-Disposition"]
    assert client.get("/annotation/export.jsonl", {"until": "2000-01-01", "since": today}).status_code == 400
    out = tmp_path / "export.jsonl"
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    err = io.StringIO()
    call_command("export_annotations", "--out", str(out), "--status", "all", "--since", tomorrow, stderr=err)
    assert (
        out.read_text() == ""
        and f"wrote 0 record(s) (all, every queue, decided from {tomorrow})" in err.getvalue()
    )
    call_command("export_annotations", "--out", str(out), "--model", "other-model", stderr=io.StringIO())
    assert [json.loads(line)["model"] for line in out.read_text().splitlines()] == ["other-model"]
    with pytest.raises(CommandError, match="until must be a date"):
        call_command("export_annotations", "--out", str(out), "--until", "soon", stderr=io.StringIO())
