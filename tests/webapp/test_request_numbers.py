"""Numbers read from a request (issue 51, item 13): a value that passes ``str.isdigit`` but not ``int``
(``²``, other scripts' digits), a 5,000-digit one, or one past what the database column holds is a
clear error or a filter that names nothing, never a 500; staff's queue policy is bounded when saved,
and a timeout already stored out of range does not break the queue for everyone."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock
from urllib.parse import urlencode

import pytest
from django.contrib.messages import get_messages
from django.utils import timezone

from tests.webapp.explorer.support import ann1, ann2, sim_run  # noqa: F401
from webapp.annotation import queue
from webapp.annotation.enqueue import enqueue_run
from webapp.annotation.models import Annotation, AnnotationItem, QueuePolicy
from webapp.params import BadNumber, bounded_int, object_id

HUGE = "9" * 5000
ODD_NUMBERS = ["²", "١٢", "1_000", "+-1", " ", HUGE, str(10**30)]


# -- the one parser ----------------------------------------------------------------------------


def test_bounded_int_reads_ascii_digits_within_bounds():
    assert bounded_int("42", low=1, high=100) == 42
    assert bounded_int(" 7 ", low=1, high=100) == 7
    assert bounded_int("", low=1, high=100, default=5) == 5
    assert bounded_int(None, low=1, high=100) is None
    assert bounded_int("-3", low=-5, high=5) == -3


@pytest.mark.parametrize("value", ["²", "١٢", "1_000", "1.0", "0x10", "+-1", "-3", "101", "0", HUGE])
def test_bounded_int_refuses_what_is_not_a_whole_number_in_range(value):
    with pytest.raises(BadNumber, match="a whole number from 1 to 100"):
        bounded_int(value, low=1, high=100, name="n")


def test_an_overlong_number_is_refused_before_it_is_converted():
    with mock.patch("builtins.int", side_effect=AssertionError("converted")), pytest.raises(BadNumber):
        bounded_int(HUGE, low=1, high=100)


@pytest.mark.parametrize("value", [*ODD_NUMBERS, "0", str(2**63)])
def test_object_id_is_none_for_what_names_no_row(value):
    assert object_id(value) is None
    assert object_id("12") == 12


# -- the pages that read numbers ------------------------------------------------------------------


@pytest.fixture
def items(sim_run):  # noqa: F811
    enqueue_run(sim_run)
    return list(AnnotationItem.objects.order_by("id"))


@pytest.mark.django_db
@pytest.mark.parametrize("value", ODD_NUMBERS)
def test_simulate_ignores_a_problem_number_that_is_not_one(client, alice, problem, value):
    client.force_login(alice)
    response = client.get("/simulate/", {"problem": value})
    assert response.status_code == 200
    assert response.context["form"].initial == {}


@pytest.mark.django_db
@pytest.mark.parametrize("value", ODD_NUMBERS)
def test_the_annotation_queue_ignores_a_problem_filter_that_is_not_a_number(client, ann1, items, value):  # noqa: F811
    client.force_login(ann1)
    assert client.get("/annotation/", {"problem": value}).status_code == 200
    assert client.get("/annotation/next/", {"problem": value}).status_code == 302  # the queue
    claimed = client.post(f"/annotation/next/?{urlencode({'problem': value})}")  # claiming: a POST
    assert claimed.status_code == 302 and claimed["Location"].startswith("/annotation/items/")


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["²", HUGE, "-1", "99"])
def test_removing_a_test_by_an_index_that_is_not_one_removes_nothing(client, alice, value):
    from tests.webapp.problems.test_problem_views import _form

    client.force_login(alice)
    response = client.post("/problems/new/", {**_form(), "remove_test": value})
    assert response.status_code == 200
    assert [f.cleaned_data.get("DELETE") for f in response.context["formset"].forms] == [False, False]


@pytest.mark.django_db
@pytest.mark.parametrize("value", ODD_NUMBERS)
def test_adjudication_reads_a_chosen_annotation_that_is_not_a_number_as_none(client, carol, items, value):
    item = items[0]
    client.force_login(carol)
    response = client.post(f"/annotation/adjudication/{item.pk}/verify/", {"chosen": value, "text": ""})
    assert response.status_code == 200
    response = client.post(
        f"/annotation/adjudication/{item.pk}/", {"chosen": value, "decision": "accept", "text": ""}
    )
    assert response.status_code == 302


# -- staff's queue policy -------------------------------------------------------------------------


def _messages(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "fields",
    [
        {"required": str(10**30), "claim_minutes": ""},
        {"required": "1", "claim_minutes": str(10**30)},
        {"required": "1", "claim_minutes": "2000000000"},
        {"required": "²", "claim_minutes": ""},
        {"required": "1", "claim_minutes": HUGE},
        {"required": "0", "claim_minutes": ""},
    ],
)
def test_a_policy_out_of_bounds_is_refused_with_the_bounds(client, carol, items, fields):
    client.force_login(carol)
    response = client.post("/annotation/policy/", {"model": "", **fields})
    assert response.status_code == 302
    said = " ".join(_messages(response))
    assert "Not saved" in said and "from 1 to" in said, said
    assert not QueuePolicy.objects.exists()
    assert client.get("/annotation/").status_code == 200


@pytest.mark.django_db
def test_a_policy_within_bounds_is_saved(client, carol, items):
    client.force_login(carol)
    fields = {"model": "", "required": "2", "claim_minutes": str(QueuePolicy.MAX_CLAIM_MINUTES)}
    response = client.post("/annotation/policy/", fields)
    assert response.status_code == 302
    policy = QueuePolicy.objects.get()
    assert (policy.required, policy.claim_seconds) == (2, QueuePolicy.MAX_CLAIM_MINUTES * 60)


@pytest.mark.django_db
def test_a_claim_timeout_stored_out_of_range_is_read_as_the_longest_allowed(client, ann1, ann2, items):  # noqa: F811
    """What embedded mode stored before the bounds (``claim_minutes=2000000000``): PostgreSQL's integer
    column holds at most 2,147,483,647 seconds, SQLite anything; both are read as the longest claim."""
    longest = QueuePolicy.MAX_CLAIM_MINUTES * 60
    QueuePolicy.objects.create(model="", required=1, claim_seconds=2_147_483_647)
    AnnotationItem.objects.update(claim_seconds=2_147_483_647)
    first = items[0]
    assert queue.claim(first, ann1)
    client.force_login(ann2)
    assert client.get("/annotation/").status_code == 200
    AnnotationItem.objects.filter(pk=first.pk).update(
        claimed_at=timezone.now() - timedelta(seconds=longest + 5)
    )
    assert queue.claim(AnnotationItem.objects.get(pk=first.pk), ann2)  # timed out after the longest claim

    stored = 2_000_000_000 * 60  # beyond PostgreSQL's column: what SQLite kept
    item = AnnotationItem(claim_seconds=stored, claimed_by=ann1, claimed_at=timezone.now())
    assert queue.holds(item, ann1)
    with mock.patch.object(queue, "_stored_timeouts", return_value=[stored]):
        assert AnnotationItem.objects.filter(queue.expired()).count() >= 0
        assert client.get("/annotation/").status_code == 200


@pytest.mark.django_db
def test_the_queue_page_shows_a_stored_policy_out_of_range_without_failing(client, carol, items):
    QueuePolicy.objects.create(model="", required=2_147_483_647, claim_seconds=2_147_483_647)
    client.force_login(carol)
    assert client.get("/annotation/").status_code == 200
    assert Annotation.objects.count() == 0


@pytest.mark.parametrize("value", ["²", "١٢", "1_0", HUGE])
def test_the_explorers_trace_picker_says_which_number_it_could_not_read(client, alice, sim_run, value):  # noqa: F811
    """The run page's "see step N" links name a candidate, a test, a turn and a step; an odd one is a
    message naming the field, read by the one parser."""
    client.force_login(alice)
    response = client.get(f"/explorer/runs/{sim_run.id}/?" + urlencode({"candidate": value, "test": "0"}))
    assert response.status_code == 302
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert said == ["Cannot open that trace: candidate must be a whole number from 0 to 10000"]
