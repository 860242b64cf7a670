"""The sign-up form: a username, a password and one self-service role."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import Group, User
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from webapp.accounts.roles import ROLE_HELP, SELF_SERVICE_ROLES


class SignupForm(UserCreationForm):
    # The help text says what each role is for; Django ties it to the select (aria-describedby).
    role = forms.ChoiceField(
        choices=[(r, r.title()) for r in SELF_SERVICE_ROLES],
        initial="developer",
        help_text=format_html(
            "What each role is for (you can ask staff for another later):<br>{}",
            format_html_join(
                mark_safe("<br>"),  # noqa: S308 (a constant)
                "<b>{}</b>: {}.",
                ((r.title(), ROLE_HELP[r]) for r in SELF_SERVICE_ROLES),
            ),
        ),
    )

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username",)

    def save(self, commit: bool = True) -> User:
        user = super().save(commit=commit)
        if commit:
            user.groups.add(Group.objects.get_or_create(name=self.cleaned_data["role"])[0])
        return user
