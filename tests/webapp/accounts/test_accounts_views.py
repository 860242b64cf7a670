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
