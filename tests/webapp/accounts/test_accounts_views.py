from __future__ import annotations

import re

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
    [("annotator", "/annotation/"), ("educator", "/explorer/"), ("developer", "/problems/")],
)
def test_a_new_user_lands_where_their_role_works(client, role, lands_on):
    """An annotator's work is the queue, an educator's the Trace explorer (issue 52); after sign-up,
    log-in and at "/" they land there."""
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


def test_the_role_select_says_what_each_role_is_for(client):
    page = client.get("/accounts/signup/").content.decode()
    assert 'aria-describedby="id_role_helptext"' in page
    assert "<b>Educator</b>: step through any Python program line by line in the Trace explorer" in page
    assert "<b>Developer</b>: let the model solve a problem" in page
    assert "<b>Annotator</b>: correct the model&#x27;s simulated traces" in page


@pytest.mark.parametrize(
    ("role", "words"),
    [
        ("developer", "imagining how its own code runs"),
        ("educator", "Trace explorer"),
        ("annotator", "queue"),
    ],
)
def test_a_new_account_is_welcomed_with_what_its_role_does(client, settings, role, words):
    """The logged-out pages' explanation goes away once signed up: the landing page says it once."""
    settings.EXECSIM_SIGNUPS_PER_HOUR = 10_000  # this test's sign-ups, whatever others did this hour
    form = {"username": "gus", "password1": "a-long-pass-42", "password2": "a-long-pass-42", "role": role}
    landed = client.post("/accounts/signup/", form, follow=True).content.decode()
    said = re.findall(r'<li class="msg success">([^<]*)</li>', landed)
    assert len(said) == 1 and said[0].startswith("Welcome, gus: you are signed up as a") and words in said[0]
