"""The annotation queue: items from a run's simulations, claims that two annotators never share, the
claim timeout, live verification of edits, decisions, undo, agreement, adjudication and export."""

from __future__ import annotations

import io
import json
import threading
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from simulator.prompts import simulate
from tests.webapp.explorer.support import FIXED_5, WRONG_5
from webapp.annotation import queue
from webapp.annotation.enqueue import enqueue_run
from webapp.annotation.export import export_records
from webapp.annotation.models import Annotation, AnnotationItem

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sandbox")]


@pytest.fixture
def items(sim_run):
    report = enqueue_run(sim_run)
    assert report.created == 2 and report.skipped == []
    right = AnnotationItem.objects.get(simulation__test=0)
    wrong = AnnotationItem.objects.get(simulation__test=1)
    return right, wrong


def test_enqueue_checks_each_simulation_against_its_real_trace(sim_run, items):
    right, wrong = items
    assert not right.divergent and wrong.divergent
    assert wrong.original_check["first_divergence"]["text"] == "y becomes 7"
    assert wrong.call == "add_one(5)" and wrong.model == "smollm2-test" and wrong.problem == sim_run.problem
    assert enqueue_run(sim_run).created == 0  # idempotent


def test_filters_narrow_the_queue(ann1, items):
    right, wrong = items
    assert list(queue.waiting_for(ann1, queue.Filters(divergent=True))) == [wrong]
    assert queue.waiting_for(ann1, queue.Filters(model="other")).count() == 0
    assert queue.waiting_for(ann1, queue.Filters(problem=right.problem_id)).count() == 2
    assert queue.Filters.from_query({"divergent": "1", "model": "m", "problem": "3"}) == queue.Filters(
        "m", 3, True
    )


def test_the_problem_filter_tells_problems_of_one_title_apart(client, ann1, items):
    right, _ = items
    problem = right.problem
    client.force_login(ann1)
    page = client.get("/annotation/").content.decode()
    assert (
        f'<option value="{problem.pk}">{problem.title} (#{problem.pk}, {problem.owner.username})</option>'
        in page
    )


def test_answers_asked_for_at_once_are_told_from_narrations(client, ann1, items):
    """The app asks for the answer at once by default (an empty thought): such an item holds only an
    answer to correct. The queue says which is which and can leave them out."""
    right, wrong = items
    at_once = simulate.answer_prefill("add_one(5)") + " 6"
    AnnotationItem.objects.filter(pk=wrong.pk).update(text=at_once)
    assert right.narrated and not AnnotationItem.objects.get(pk=wrong.pk).narrated
    assert list(queue.waiting_for(ann1, queue.Filters(narrated=True))) == [right]
    assert queue.Filters.from_query({"narrated": "1"}).query() == "narrated=1"
    client.force_login(ann1)
    page = client.get("/annotation/?narrated=1").content.decode()
    assert page.count('data-testid="queue-item"') == 1 and "<td>narration</td>" in page
    assert "<td>answer only</td>" in client.get("/annotation/").content.decode()


def test_two_annotators_never_hold_the_same_item(ann1, ann2, items):
    first = queue.claim_next(ann1)
    second = queue.claim_next(ann2)
    assert first is not None and second is not None and first.pk != second.pk
    assert queue.claim_next(ann1).pk == first.pk  # asking again gives back the held item
    assert not queue.claim(first, ann2)  # and it cannot be taken while held
    third = queue.claim_next(ann2)
    assert third.pk == second.pk


def test_concurrent_claims_are_exclusive(django_user_model, sim_run):
    from django.contrib.auth.models import Group

    from webapp.runs.models import Simulation

    for test in range(2, 6):  # 6 items in all (texts that differ: the same text would be a duplicate)
        text = WRONG_5.replace("7", str(test + 5))
        Simulation.objects.create(run=sim_run, candidate=0, test=test % 2, sample=test, text=text, done=True)
    enqueue_run(sim_run)
    group = Group.objects.get_or_create(name="annotator")[0]
    users = []
    for i in range(10):
        user = django_user_model.objects.create_user(f"racer{i}")
        user.groups.add(group)
        users.append(user)
    barrier = threading.Barrier(len(users))
    won: list[int | None] = []
    lock = threading.Lock()

    def race(user):
        try:
            barrier.wait()
            item = queue.claim_next(user)
            with lock:
                won.append(item.pk if item else None)
        finally:
            connection.close()

    threads = [threading.Thread(target=race, args=(u,)) for u in users]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    claimed = [pk for pk in won if pk is not None]
    assert len(claimed) == len(set(claimed)) == AnnotationItem.objects.count() == 6
    assert AnnotationItem.objects.filter(claimed_by__isnull=False).count() == 6


@override_settings(EXECSIM_ANNOTATION_CLAIM_SECONDS=60)
def test_a_claim_released_by_timeout_goes_back_to_the_queue(ann1, ann2, items):
    held = queue.claim_next(ann1)
    other = queue.claim_next(ann2)
    assert queue.claim_next(django_user := ann2).pk == other.pk and django_user
    AnnotationItem.objects.filter(pk=held.pk).update(claimed_at=timezone.now() - timedelta(seconds=61))
    queue.submit(other, ann2, Annotation.REJECT, other.text)
    taken = queue.claim_next(ann2)
    assert taken.pk == held.pk and taken.claimed_by == ann2
    with pytest.raises(queue.NotHeld):  # the first holder's late decision is refused
        queue.submit(held, ann1, Annotation.ACCEPT, held.text)
    assert queue.release_expired() == 0


def test_an_edit_contradicting_the_trace_is_flagged_before_saving(client, ann1, items):
    _, wrong = items
    client.force_login(ann1)
    page = client.post(f"/annotation/items/{wrong.pk}/", follow=True).content.decode()
    assert 'data-false="3"' in page and 'data-label="diverges"' in page  # y, return, answer
    flagged = client.post(
        f"/annotation/items/{wrong.pk}/verify/", {"text": WRONG_5.replace("y becomes 7", "y becomes 8")}
    )
    body = flagged.content.decode()
    assert 'data-label="diverges"' in body and 'data-false="' in body and "y becomes 8" in body
    assert 'data-verified="0"' in body
    fixed = client.post(f"/annotation/items/{wrong.pk}/verify/", {"text": FIXED_5}).content.decode()
    assert 'data-false="0"' in fixed and 'data-verified="1"' in fixed and 'data-label="agrees"' in fixed
    assert not Annotation.objects.exists()  # verifying saves nothing


def test_accepting_a_fixed_text_records_a_passed_verification_and_edited_claims(client, ann1, items):
    _, wrong = items
    client.force_login(ann1)
    client.post(f"/annotation/items/{wrong.pk}/", follow=True)
    response = client.post(f"/annotation/items/{wrong.pk}/decide/", {"decision": "accept", "text": FIXED_5})
    right, _ = items  # the same POST claims the next item and opens it
    assert response.status_code == 302 and response["Location"] == f"/annotation/items/{right.pk}/"
    annotation = Annotation.objects.get()
    assert annotation.verified and annotation.verification["counts"]["false"] == 0
    assert True in annotation.edited_claims and False in annotation.edited_claims
    wrong.refresh_from_db()
    assert wrong.status == AnnotationItem.DONE and wrong.decision == "accept" and wrong.claimed_by is None


def test_skip_does_not_count_and_the_item_is_not_served_again(ann1, ann2, items):
    item = queue.claim_next(ann1)
    queue.submit(item, ann1, Annotation.SKIP, "")
    item.refresh_from_db()
    assert item.status == AnnotationItem.OPEN
    assert queue.claim_next(ann1).pk != item.pk
    assert queue.claim_next(ann2).pk == item.pk


def test_undo_takes_back_the_last_decision_and_returns_the_item(client, ann1, items):
    item = queue.claim_next(ann1)
    queue.submit(item, ann1, Annotation.REJECT, item.text)
    client.force_login(ann1)
    response = client.post("/annotation/undo/")
    assert response["Location"] == f"/annotation/items/{item.pk}/"
    item.refresh_from_db()
    assert not Annotation.objects.exists() and item.status == AnnotationItem.OPEN and item.claimed_by == ann1


def test_disagreement_is_adjudicated_and_the_export_follows_staff(client, ann1, ann2, carol, sim_run):
    enqueue_run(sim_run, required=2)
    item = AnnotationItem.objects.get(simulation__test=1)
    for user, decision, text in ((ann1, "accept", FIXED_5), (ann2, "reject", item.text)):
        assert queue.claim(item, user)
        queue.submit(item, user, decision, text)
    item.refresh_from_db()
    assert item.status == AnnotationItem.DISPUTED
    assert list(export_records("all")) == []  # undecided: nothing exported

    client.force_login(ann1)
    stats = client.get("/annotation/agreement/").content.decode()
    assert 'data-testid="decision-alpha">0.000<' in stats  # one unit, two categories: alpha = 0

    client.force_login(carol)
    assert f"/annotation/adjudication/{item.pk}/" in client.get("/annotation/adjudication/").content.decode()
    chosen = Annotation.objects.get(annotator=ann1)
    client.post(
        f"/annotation/adjudication/{item.pk}/", {"decision": "accept", "chosen": chosen.pk, "text": ""}
    )
    [record] = export_records("verified")
    assert (
        record.decided_by == "adjudication" and record.adjudicator == "carol" and record.annotator == "ann1"
    )
    assert record.completion == FIXED_5 and record.verification["verified"] is True

    client.post(f"/annotation/adjudication/{item.pk}/", {"decision": "reject"})
    assert list(export_records("all")) == []  # staff changed their mind: the export follows


def test_overall_agreement_uses_krippendorffs_alpha(ann1, ann2, sim_run):
    from webapp.annotation.stats import overall_agreement

    enqueue_run(sim_run, required=2)
    right, wrong = (
        AnnotationItem.objects.get(simulation__test=0),
        AnnotationItem.objects.get(simulation__test=1),
    )
    for user in (ann1, ann2):
        for item, decision, text in ((right, "accept", right.text), (wrong, "reject", wrong.text)):
            queue.claim(item, user)
            queue.submit(item, user, decision, text)
    result = overall_agreement(AnnotationItem.objects.all())
    assert result["items"] == 2 and result["decision_alpha"] == 1.0 and result["decision_agreement"] == 1.0
    assert result["claim_agreement"] == 1.0  # nobody edited anything


def test_export_command_writes_jsonl_filtered_by_verification(tmp_path, ann1, items):
    right, wrong = items
    for item, text in ((right, right.text), (wrong, WRONG_5)):  # the wrong one accepted uncorrected
        queue.claim(item, ann1)
        queue.submit(item, ann1, Annotation.ACCEPT, text)
    out = tmp_path / "export.jsonl"
    call_command("export_annotations", "--out", str(out), stderr=io.StringIO())
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 1 and records[0]["item"] == right.pk
    record = records[0]
    assert record["verification"]["verified"] is True and record["annotator"] == "ann1"
    assert record["model"] == "smollm2-test" and record["source_run"] == str(right.run_id)
    assert "assert add_one(1) == ??" in record["prompt"] and record["completion"] == right.text
    call_command("export_annotations", "--out", str(out), "--status", "all", stderr=io.StringIO())
    assert len(out.read_text().splitlines()) == 2
    call_command("export_annotations", "--out", str(out), "--status", "unverified", stderr=io.StringIO())
    [unverified] = [json.loads(line) for line in out.read_text().splitlines()]
    assert unverified["verification"]["verified"] is False and unverified["verification"]["first_divergence"]


def test_export_page_is_for_staff(client, ann1, carol, items):
    client.force_login(ann1)
    assert client.get("/annotation/export.jsonl").status_code == 403
    client.force_login(carol)
    response = client.get("/annotation/export.jsonl?status=all")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/jsonl")
    assert client.get("/annotation/export.jsonl?status=bogus").status_code == 400


def test_roles_guard_the_queue(client, alice, ann1, items):
    assert client.get("/annotation/").status_code == 302  # logged out: to the login page
    client.force_login(alice)  # a developer
    assert client.get("/annotation/").status_code == 403
    client.force_login(ann1)
    page = client.get("/annotation/").content.decode()
    assert 'data-testid="queue-waiting">2<' in page


def test_staff_add_a_runs_simulations_from_the_queue_page(client, carol, sim_run):
    client.force_login(carol)
    client.post("/annotation/enqueue/", {"run": str(sim_run.id)})
    assert AnnotationItem.objects.count() == 2
    client.post("/annotation/enqueue/", {"run": "not-a-uuid"})
    assert AnnotationItem.objects.count() == 2


def test_enqueue_command(sim_run):
    out = io.StringIO()
    call_command("enqueue_annotations", str(sim_run.id), stdout=out)
    assert "2 added" in out.getvalue() and AnnotationItem.objects.count() == 2


def test_a_finished_run_puts_its_simulations_in_the_queue(make_run):
    """The task's run_ended signal enqueues every finished simulation, checked against its real trace."""
    from webapp.annotation.models import AnnotationItem
    from webapp.runs.models import Run, Simulation
    from webapp.runs.tasks import execute_run

    run = make_run(settings={"k": 2, "turns": 0, "seed": 7})
    assert execute_run(str(run.id)) == Run.FINISHED
    simulations = Simulation.objects.filter(run=run, done=True).exclude(text="")
    assert simulations.count() > 0
    assert AnnotationItem.objects.filter(simulation__run=run).count() == simulations.count()


def _copy_of(run, make_run, **fields):
    """Another run with ``run``'s candidates and simulations (the same program, tests and texts)."""
    from webapp.runs.models import Candidate, Simulation

    copy = make_run(**{"status": "finished", "provenance": run.provenance, **fields})
    for candidate in run.candidates.all():
        Candidate.objects.create(run=copy, index=candidate.index, code=candidate.code, done=True)
    for sim in run.simulations.all():
        fields = {"candidate": sim.candidate, "test": sim.test, "text": sim.text, "predicted": sim.predicted}
        Simulation.objects.create(run=copy, done=True, **fields)
    return copy


def test_a_task_queued_again_is_set_aside_as_a_duplicate(client, ann1, items, make_run, sim_run):
    """The same model's same text on the same program and input (a program the model wrote again, in
    this run or another) is one task: its second item is never served, and the export holds it once."""
    right, wrong = items
    report = enqueue_run(_copy_of(sim_run, make_run))
    assert (report.created, report.duplicates) == (0, 2) and report.summary().startswith("0 added, 2 dup")
    copies = AnnotationItem.objects.filter(status=AnnotationItem.DUPLICATE).order_by("id")
    assert [c.duplicate_of for c in copies] == [right, wrong]
    assert copies[1].divergent and copies[1].original_check == wrong.original_check  # shared, not rerun
    assert queue.waiting_for(ann1).count() == 2
    client.force_login(ann1)
    page = client.get("/annotation/").content.decode()
    assert page.count('data-testid="queue-item"') == 2 and "2 more simulations set aside" in page
    response = client.get(f"/annotation/items/{copies[0].pk}/", follow=True)
    assert f"the same simulation as item {right.pk}: annotate that." in response.content.decode()
    assert AnnotationItem.objects.get(pk=copies[0].pk).claimed_by is None
    for item in (right, wrong):
        queue.claim(item, ann1)
        queue.submit(item, ann1, Annotation.ACCEPT, FIXED_5 if item == wrong else item.text)
    queue.set_policy("", 1, None)  # a policy change refreshes statuses: duplicates stay set aside
    assert AnnotationItem.objects.filter(status=AnnotationItem.DUPLICATE).count() == 2
    assert sorted(r.item for r in export_records("all")) == [right.pk, wrong.pk]


def test_another_models_same_text_is_its_own_task(items, make_run, sim_run):
    report = enqueue_run(_copy_of(sim_run, make_run, provenance={"model": "other-model"}))
    assert (report.created, report.duplicates) == (2, 0)


def test_the_migration_sets_aside_the_duplicates_already_queued(ann1, items, make_run, sim_run):
    """Items queued before tasks had keys: the open, unannotated copies become duplicates."""
    import importlib

    from django.apps import apps

    right, wrong = items
    queue.claim(wrong, ann1)
    queue.submit(wrong, ann1, Annotation.REJECT, wrong.text)
    enqueue_run(_copy_of(sim_run, make_run))
    AnnotationItem.objects.update(task_key="", status=AnnotationItem.OPEN, duplicate_of=None)
    wrong.refresh_from_db()
    queue.refresh_status(wrong)  # done again: its annotation is kept
    migration = importlib.import_module("webapp.annotation.migrations.0003_item_duplicates")
    migration.key_and_set_aside(apps, None)
    statuses = list(AnnotationItem.objects.order_by("id").values_list("status", "duplicate_of"))
    assert statuses == [("open", None), ("done", None), ("duplicate", right.pk), ("duplicate", wrong.pk)]
    assert all(len(k) == 64 for k in AnnotationItem.objects.values_list("task_key", flat=True))


def test_when_the_original_goes_its_duplicates_wait_to_be_added_again(items, make_run, sim_run):
    from webapp.annotation.enqueue import runs_to_add

    copy = _copy_of(sim_run, make_run)
    enqueue_run(copy)
    assert copy not in runs_to_add()
    sim_run.delete()  # its items, the originals, go with it, and so do their duplicates
    assert AnnotationItem.objects.count() == 0 and copy in runs_to_add()
    report = enqueue_run(copy)
    assert (report.created, report.duplicates) == (2, 0)
