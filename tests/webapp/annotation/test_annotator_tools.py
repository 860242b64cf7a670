"""Issue 13, the annotator's part: the word diff of a correction, "reset to original" and "use the
trace's value" (with and without JavaScript), the real result in the review header, skips not counted
as done, undo holding one item, staff's per-queue overlap and claim timeout (for items already queued),
the run picker, and adjudication (live verification, credit for a replacement, no "verified" badge on
a rejection). ann1/ann2 annotate, carol is staff, alice is a developer, a visitor has no account."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.webapp.explorer.support import FIXED_5, WRONG_5
from webapp.annotation import queue
from webapp.annotation.corrections import changed_words, word_diff
from webapp.annotation.enqueue import enqueue_run
from webapp.annotation.export import export_records
from webapp.annotation.models import Annotation, AnnotationItem, QueuePolicy

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sandbox")]


@pytest.fixture
def items(sim_run):
    enqueue_run(sim_run)
    return AnnotationItem.objects.get(simulation__test=0), AnnotationItem.objects.get(simulation__test=1)


def _textarea(page: str) -> str:
    return html.unescape(re.search(r'data-testid="review-text"[^>]*>(.*?)</textarea>', page, re.S).group(1))


def test_word_diff_of_a_long_text_costs_what_its_change_does_not_what_its_length_squared_does():
    """The live check diffs on every keystroke (issue 51, item 8): a 20 kB text with one word changed,
    or rewritten whole, is diffed at once; the same chunks as before where the change is small."""
    import time

    sentence = "Line {i}: x is {i}, so the loop goes on with total = {t}. "
    original = "".join(sentence.format(i=i, t=i * 3) for i in range(300))  # ~20 kB
    edited = original.replace("total = 450.", "total = 451.")
    started = time.process_time()
    chunks = word_diff(original, edited)
    rewritten = word_diff(original, original.upper().replace("LINE", "Row"))
    assert time.process_time() - started < 1.5
    assert [(c.op, c.text) for c in chunks if c.op != "same"] == [("del", "450"), ("ins", "451")]
    assert "".join(c.text for c in chunks if c.op != "ins") == original
    assert "".join(c.text for c in chunks if c.op != "del") == edited
    assert "".join(c.text for c in rewritten if c.op != "ins") == original


def test_word_diff_marks_only_the_changed_words():
    chunks = word_diff("y becomes 7. It returns 7.", "y becomes 6. It returns 7.")
    assert [(c.op, c.text) for c in chunks if c.op != "same"] == [("del", "7"), ("ins", "6")]
    assert "".join(c.text for c in chunks if c.op != "del") == "y becomes 6. It returns 7."
    assert changed_words(chunks) == 1
    assert changed_words(word_diff("a b", "a b c d")) == 2 and changed_words(word_diff("a b c", "a")) == 2


def test_the_verdicts_fragment_diffs_the_correction_and_offers_the_traces_values(client, ann1, items):
    _, wrong = items
    client.force_login(ann1)
    page = client.post(f"/annotation/items/{wrong.pk}/", follow=True).content.decode()
    assert 'data-changed="0"' in page  # nothing edited yet
    assert page.count('data-testid="use-trace-value"') == 3  # y, the return value, the answer
    assert 'data-testid="reset"' in page and f'href="/annotation/items/{wrong.pk}/"' in page
    body = client.post(
        f"/annotation/items/{wrong.pk}/verify/", {"text": WRONG_5.replace("y becomes 7", "y becomes 6")}
    ).content.decode()
    assert 'data-changed="1"' in body and "<del>7</del><ins>6</ins>" in body
    assert body.count('data-testid="use-trace-value"') == 2  # y is right now
    escaped = client.post(f"/annotation/items/{wrong.pk}/verify/", {"text": "<b>x</b>"}).content.decode()
    assert "<b>x</b>" not in escaped and "&lt;b&gt;" in escaped


def test_a_page_view_reads_the_model_texts_stored_check_and_does_not_check_it_again(
    client, ann1, items, monkeypatch
):
    """The review screen shows the model's text with its claims checked when the item was queued
    (issue 51, item 8: never re-verify a stored text on a page view); an edited text is checked."""
    import webapp.annotation.models as models

    _, wrong = items
    client.force_login(ann1)
    client.post(f"/annotation/items/{wrong.pk}/")  # claim it
    checked: list[str] = []
    real_verify = models.verify
    monkeypatch.setattr(
        models, "verify", lambda text, *a, **k: checked.append(text) or real_verify(text, *a, **k)
    )
    page = client.get(f"/annotation/items/{wrong.pk}/").content.decode()
    assert 'data-testid="use-trace-value"' in page and checked == []
    client.post(f"/annotation/items/{wrong.pk}/verify/", {"text": WRONG_5.replace("7", "6", 1)})
    assert checked == [WRONG_5.replace("7", "6", 1)]


def test_use_the_traces_value_without_javascript_fixes_one_claim_and_saves_nothing(client, ann1, items):
    _, wrong = items
    client.force_login(ann1)
    client.post(f"/annotation/items/{wrong.pk}/", follow=True)
    page = client.post(f"/annotation/items/{wrong.pk}/fix/", {"text": WRONG_5, "fix": "1"}).content.decode()
    assert _textarea(page) == WRONG_5.replace("y becomes 7", "y becomes 6")
    assert not Annotation.objects.exists()
    text = _textarea(page)
    for _ in range(2):  # the return value, then the answer (claims 2 and 3): then the text verifies
        index = re.search(r'name="fix" value="(\d+)"', page).group(1)
        page = client.post(
            f"/annotation/items/{wrong.pk}/fix/", {"text": text, "fix": index}
        ).content.decode()
        text = _textarea(page)
    assert text == FIXED_5 and 'data-verified="1"' in page
    stale = client.post(f"/annotation/items/{wrong.pk}/fix/", {"text": FIXED_5, "fix": "1"})
    assert _textarea(stale.content.decode()) == FIXED_5  # nothing false left: the text unchanged


def test_fix_is_for_the_items_holder(client, ann1, ann2, alice, items):
    _, wrong = items
    assert queue.claim(wrong, ann2)
    client.force_login(ann1)
    response = client.post(f"/annotation/items/{wrong.pk}/fix/", {"text": WRONG_5, "fix": "1"})
    assert response.status_code == 302 and response["Location"] == "/annotation/"
    client.force_login(alice)
    assert client.post(f"/annotation/items/{wrong.pk}/fix/", {"text": WRONG_5}).status_code == 403
    client.logout()
    assert client.post(f"/annotation/items/{wrong.pk}/fix/", {"text": WRONG_5}).status_code == 302


def test_the_review_header_shows_what_the_real_run_returned(client, ann1, items):
    _, wrong = items
    client.force_login(ann1)
    page = client.post(f"/annotation/items/{wrong.pk}/", follow=True).content.decode()
    assert re.search(r'data-testid="review-real">returned 6<', page)


def test_skips_are_not_counted_as_done(client, ann1, items):
    right, wrong = items
    queue.claim(right, ann1)
    queue.submit(right, ann1, Annotation.SKIP, "")
    client.force_login(ann1)
    page = client.post(f"/annotation/items/{wrong.pk}/", follow=True).content.decode()
    assert "0 done so far" in page
    listing = client.get("/annotation/").content.decode()
    assert "<td>0 / 1</td>" in listing and "<td>1 / 1</td>" not in listing
    queue.submit(wrong, ann1, Annotation.REJECT, wrong.text)
    assert queue.done_by(ann1) == 1


def test_undo_after_a_skip_leaves_one_item_claimed(ann1, items):
    first = queue.claim_next(ann1)
    queue.submit(first, ann1, Annotation.SKIP, "")
    second = queue.claim_next(ann1)
    assert second.pk != first.pk
    assert queue.undo(ann1).pk == first.pk
    assert list(AnnotationItem.objects.filter(claimed_by=ann1).values_list("pk", flat=True)) == [first.pk]


def test_claiming_a_second_item_gives_the_first_back(client, ann1, items):
    right, wrong = items
    client.force_login(ann1)
    client.post(f"/annotation/items/{right.pk}/", follow=True)
    client.post(f"/annotation/items/{wrong.pk}/", follow=True)
    assert list(AnnotationItem.objects.filter(claimed_by=ann1).values_list("pk", flat=True)) == [wrong.pk]


def test_staff_set_a_queues_overlap_for_items_already_queued_and_new_ones(client, carol, ann1, sim_run):
    enqueue_run(sim_run)
    done = AnnotationItem.objects.get(simulation__test=0)
    queue.claim(done, ann1)
    queue.submit(done, ann1, Annotation.ACCEPT, done.text)
    done.refresh_from_db()
    assert done.status == AnnotationItem.DONE
    client.force_login(carol)
    page = client.get("/annotation/").content.decode()
    assert 'data-testid="policy-form"' in page
    client.post("/annotation/policy/", {"model": "smollm2-test", "required": "2", "claim_minutes": "3"})
    done.refresh_from_db()
    assert done.required == 2 and done.status == AnnotationItem.OPEN and done.claim_seconds == 180
    assert QueuePolicy.objects.get(model="smollm2-test").required == 2
    AnnotationItem.objects.all().delete()
    enqueue_run(sim_run)  # added later: the queue's settings
    assert set(AnnotationItem.objects.values_list("required", "claim_seconds")) == {(2, 180)}
    client.post("/annotation/policy/", {"model": "smollm2-test", "required": "0"})
    assert QueuePolicy.objects.get(model="smollm2-test").required == 2  # refused


def test_a_queues_claim_timeout_re_queues_its_items(carol, ann1, ann2, items):
    queue.set_policy("", 1, 2)
    held = queue.claim_next(ann1)
    assert queue.claim_next(ann2).pk != held.pk
    AnnotationItem.objects.filter(pk=held.pk).update(claimed_at=timezone.now() - timedelta(seconds=121))
    assert queue.claim(held, ann2)  # two minutes passed: back in the queue (the site default is 10)
    assert queue.claim_next(ann2).pk == held.pk


def test_queue_settings_are_for_staff(client, ann1, items):
    client.force_login(ann1)
    assert 'data-testid="policy-form"' not in client.get("/annotation/").content.decode()
    assert client.post("/annotation/policy/", {"required": "3"}).status_code == 403
    client.logout()
    assert client.post("/annotation/policy/", {"required": "3"}).status_code == 302
    assert not QueuePolicy.objects.exists()


def test_staff_pick_a_run_to_add_from_the_shared_ones(client, carol, alice, sim_run, problem):
    from webapp.runs.models import Run

    private = Run.objects.create(problem=problem, user=alice, status=Run.FINISHED, settings={"k": 1})
    problem.is_public = False
    problem.save()
    private.simulations.create(candidate=0, test=0, text="x", done=True)
    sim_run.problem.refresh_from_db()
    client.force_login(carol)
    page = client.get("/annotation/").content.decode()
    assert 'data-testid="enqueue-run"' in page
    # sim_run and the private run share the fixture problem: make sim_run's opted in.
    sim_run.settings = {**sim_run.settings, "annotate": True}
    sim_run.save()
    page = client.get("/annotation/").content.decode()
    assert f'value="{sim_run.id}"' in page and f'value="{private.id}"' not in page
    client.post("/annotation/enqueue/", {"run": str(private.id)})
    assert not AnnotationItem.objects.exists()  # not shared: refused
    client.post("/annotation/enqueue/", {"run": str(sim_run.id)})
    assert AnnotationItem.objects.count() == 2
    assert f'value="{sim_run.id}"' not in client.get("/annotation/").content.decode()  # all added


def _disputed(sim_run, ann1, ann2):
    enqueue_run(sim_run, required=2)
    item = AnnotationItem.objects.get(simulation__test=1)
    for user, decision, text in ((ann1, "accept", FIXED_5), (ann2, "reject", item.text)):
        queue.claim(item, user)
        queue.submit(item, user, decision, text)
    return item


def test_adjudication_re_verifies_the_replacement_live(client, carol, ann1, ann2, sim_run):
    item = _disputed(sim_run, ann1, ann2)
    client.force_login(carol)
    page = client.get(f"/annotation/adjudication/{item.pk}/").content.decode()
    assert 'data-testid="adjudicate-verdicts"' in page and "adjudicate_verify" not in page
    assert f'hx-post="/annotation/adjudication/{item.pk}/verify/"' in page
    bad = client.post(f"/annotation/adjudication/{item.pk}/verify/", {"text": WRONG_5}).content.decode()
    assert 'data-verified="0"' in bad and 'data-label="diverges"' in bad
    good = client.post(f"/annotation/adjudication/{item.pk}/verify/", {"text": FIXED_5}).content.decode()
    assert 'data-verified="1"' in good and "<del>7</del><ins>6</ins>" in good
    client.force_login(ann1)
    assert client.post(f"/annotation/adjudication/{item.pk}/verify/", {"text": FIXED_5}).status_code == 403


def test_a_rejecting_annotators_panel_has_no_verified_badge(client, carol, ann1, ann2, sim_run):
    item = _disputed(sim_run, ann1, ann2)
    Annotation.objects.filter(annotator=ann2).update(text=FIXED_5)  # rejected, though the text verifies
    client.force_login(carol)
    page = client.get(f"/annotation/adjudication/{item.pk}/").content.decode()
    badges = re.findall(r'data-testid="adjudicate-badge">(.*?)</p>', page)
    assert len(badges) == 2 and "verified" in badges[0] and badges[1] == "rejected the model's text"


def test_the_export_credits_the_adjudicator_for_a_replacement(client, carol, ann1, ann2, sim_run):
    item = _disputed(sim_run, ann1, ann2)
    chosen = Annotation.objects.get(annotator=ann1)
    replacement = FIXED_5.replace("add_one is called", "add_one gets called")
    client.force_login(carol)
    client.post(
        f"/annotation/adjudication/{item.pk}/",
        {"decision": "accept", "chosen": chosen.pk, "text": replacement},
    )
    [record] = export_records("all")
    assert record.completion == replacement and record.annotator == "carol" and record.adjudicator == "carol"
    client.post(
        f"/annotation/adjudication/{item.pk}/", {"decision": "accept", "chosen": chosen.pk, "text": ""}
    )
    [record] = export_records("all")
    assert record.annotator == "ann1"  # the chosen text as it was: the annotator's
