"""Who may do what (webapp.accounts.roles): roles are groups, staff hold every role, and a page's
navigation offers only what its viewer's role may open."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, Group

from webapp.accounts.roles import has_role, is_staff

pytestmark = pytest.mark.django_db


def _in(django_user_model: Any, name: str, *groups: str) -> Any:
    user = django_user_model.objects.create_user(name, password=f"pw-{name}-123")
    for group in groups:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


def test_it_grants_a_role_to_its_groups_members_only(django_user_model):
    annotator = _in(django_user_model, "ann", "annotator")
    assert has_role(annotator, "annotator") and has_role(annotator, "educator", "annotator")
    assert not has_role(annotator, "educator") and not is_staff(annotator)
    assert not has_role(AnonymousUser(), "annotator") and not is_staff(AnonymousUser())


def test_staff_hold_every_role_by_group_or_django_flag(django_user_model):
    by_group = _in(django_user_model, "carol", "staff")
    by_flag = django_user_model.objects.create_user("dan", is_staff=True)
    superuser = django_user_model.objects.create_superuser("root")
    for user in (by_group, by_flag, superuser):
        assert is_staff(user) and has_role(user, "annotator") and has_role(user, "educator")


def test_the_forbidden_page_names_the_role(client, alice):
    client.force_login(alice)  # a developer
    response = client.get("/annotation/")
    assert response.status_code == 403
    assert "for the annotator role" in response.content.decode()


def test_staff_by_group_see_the_staff_links_on_every_annotation_page(client, carol):
    client.force_login(carol)  # staff through the 'staff' group, not Django's is_staff flag
    for url in ("/annotation/", "/annotation/agreement/"):
        assert 'data-testid="nav-adjudication"' in client.get(url).content.decode(), url


def test_annotators_see_no_staff_links(client, django_user_model):
    client.force_login(_in(django_user_model, "ann", "annotator"))
    page = client.get("/annotation/agreement/").content.decode()
    assert 'data-testid="nav-annotation"' in page and 'data-testid="nav-adjudication"' not in page
