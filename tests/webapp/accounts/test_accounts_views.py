from __future__ import annotations

import pytest
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db


def test_it_signs_up_with_a_role_and_logs_in(client):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "dora",
            "password1": "a-long-pass-42",
            "password2": "a-long-pass-42",
            "role": "educator",
        },
    )
    assert response.status_code == 302
    user = User.objects.get(username="dora")
    assert list(user.groups.values_list("name", flat=True)) == ["educator"]
    assert client.get("/problems/").context["user"] == user


@pytest.mark.parametrize(
    ("role", "lands_on"),
    [("annotator", "/annotation/"), ("educator", "/problems/"), ("developer", "/problems/")],
)
def test_a_new_user_lands_where_their_role_works(client, role, lands_on):
    """An annotator's work is the queue; after sign-up, log-in and at "/" they land there."""
    form = {"username": "fay", "password1": "a-long-pass-42", "password2": "a-long-pass-42", "role": role}
    assert client.post("/accounts/signup/", form).url == "/"
    assert client.get("/").url == lands_on
    client.post("/accounts/logout/")
    assert client.get("/").url == "/problems/"  # a visitor: the problems page asks them to log in
    response = client.post("/accounts/login/", {"username": "fay", "password": "a-long-pass-42"})
    assert response.url == "/" and client.get("/").url == lands_on


def test_it_does_not_offer_staff_at_sign_up(client):
    response = client.post(
        "/accounts/signup/",
        {"username": "eve", "password1": "a-long-pass-42", "password2": "a-long-pass-42", "role": "staff"},
    )
    assert response.status_code == 200
    assert "role" in response.context["form"].errors
    assert not User.objects.filter(username="eve").exists()


def test_it_logs_in_and_out(client, alice):
    assert (
        client.post("/accounts/login/", {"username": "alice", "password": "pw-alice-123"}).status_code == 302
    )
    assert client.get("/problems/").context["user"] == alice
    assert client.post("/accounts/logout/").status_code == 302
    assert not client.get("/problems/").context["user"].is_authenticated


def test_it_enforces_csrf_on_forms(alice):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(alice)
    assert strict.post("/problems/new/", {"title": "x"}).status_code == 403
