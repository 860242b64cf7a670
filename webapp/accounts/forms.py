"""The sign-up form: a username, a password and one self-service role."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import Group, User

from webapp.accounts.roles import SELF_SERVICE_ROLES


class SignupForm(UserCreationForm):
    role = forms.ChoiceField(choices=[(r, r.title()) for r in SELF_SERVICE_ROLES], initial="developer")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username",)

    def save(self, commit: bool = True) -> User:
        user = super().save(commit=commit)
        if commit:
            user.groups.add(Group.objects.get_or_create(name=self.cleaned_data["role"])[0])
        return user
