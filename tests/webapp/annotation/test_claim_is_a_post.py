"""Claiming an annotation item is a POST (issue 51, item 17): a GET of ``/annotation/next/`` or of an
item's page (a browser's prefetch, a crawler, a link preview) claims nothing; the queue's "Start
reviewing" is a form with a CSRF token; deciding an item claims the next one in the same POST."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from webapp.annotation.enqueue import enqueue_run
from webapp.annotation.models import AnnotationItem

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("sandbox")]


@pytest.fixture
def items(sim_run):
    enqueue_run(sim_run)
    return list(AnnotationItem.objects.order_by("id"))


def _held_by(user) -> list[int]:
    return list(AnnotationItem.objects.filter(claimed_by=user).values_list("pk", flat=True))


def test_a_get_of_next_claims_nothing_and_shows_the_queue(client, ann1, items):
    client.force_login(ann1)
    response = client.get("/annotation/next/?divergent=1")
    assert response.status_code == 302 and response["Location"] == "/annotation/?divergent=1"
    assert _held_by(ann1) == []


def test_a_post_to_next_claims_the_first_free_item_and_opens_it(client, ann1, items):
    client.force_login(ann1)
    response = client.post("/annotation/next/?divergent=1")
    wrong = items[1]
    assert (
        response.status_code == 302 and response["Location"] == f"/annotation/items/{wrong.pk}/?divergent=1"
    )
    assert _held_by(ann1) == [wrong.pk]
    page = client.get(response["Location"])
    assert page.status_code == 200 and page.context["item"] == wrong


def test_claiming_needs_the_csrf_token(ann1, items):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ann1)
    assert client.post("/annotation/next/").status_code == 403
    assert _held_by(ann1) == []
    page = client.get("/annotation/").content.decode()
    form = re.search(r'<form method="post" action="/annotation/next/"[^>]*>(.*?)</form>', page, re.S)
    assert form is not None, "the queue offers claiming as a form"
    assert 'name="csrfmiddlewaretoken"' in form.group(1) and 'data-testid="queue-start"' in form.group(1)
    assert 'href="/annotation/next/' not in page  # no link a prefetch could follow
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.group(1)).group(1)
    assert client.post("/annotation/next/", {"csrfmiddlewaretoken": token}).status_code == 302
    assert len(_held_by(ann1)) == 1


def test_a_get_of_an_item_page_claims_nothing(client, ann1, ann2, items):
    right, _ = items
    client.force_login(ann1)
    response = client.get(f"/annotation/items/{right.pk}/")
    assert _held_by(ann1) == []
    page = response.content.decode()
    assert response.status_code == 200 and f"Item {right.pk} is not claimed by you" in page
    assert (
        f'<form method="post" action="/annotation/items/{right.pk}/"' in page
        and "csrfmiddlewaretoken" in page
    )
    claimed = client.post(f"/annotation/items/{right.pk}/")  # the page's offer: a POST
    assert claimed.status_code == 302 and claimed["Location"] == f"/annotation/items/{right.pk}/"
    assert _held_by(ann1) == [right.pk]
    assert client.get(f"/annotation/items/{right.pk}/").status_code == 200  # held: shown
    client.force_login(ann2)
    response = client.get(f"/annotation/items/{right.pk}/")
    assert response.status_code == 302 and response["Location"] == "/annotation/"  # someone else's
    assert client.post(f"/annotation/items/{right.pk}/").status_code == 302
    assert _held_by(ann1) == [right.pk] and _held_by(ann2) == []


def test_deciding_claims_the_next_item_in_the_same_post(client, ann1, items):
    right, wrong = items
    client.force_login(ann1)
    client.post("/annotation/next/")
    response = client.post(f"/annotation/items/{right.pk}/decide/", {"decision": "skip", "text": right.text})
    assert response.status_code == 302 and response["Location"] == f"/annotation/items/{wrong.pk}/"
    assert _held_by(ann1) == [wrong.pk]
    response = client.post(
        f"/annotation/items/{wrong.pk}/decide/", {"decision": "reject", "text": wrong.text}
    )
    assert response.status_code == 302 and response["Location"] == "/annotation/"  # nothing left
    assert _held_by(ann1) == []
