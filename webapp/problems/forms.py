"""Forms for problems: the problem itself, its tests (a formset), and importing a file."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from simulator.benchmarks import FORMATS
from webapp.limits import code_errors
from webapp.problems.models import Problem, TestCase
from webapp.text import TypedField


class ProblemForm(forms.ModelForm):
    statement = TypedField(
        strip=True, widget=forms.Textarea(attrs={"rows": 12}), help_text=Problem.statement.field.help_text
    )
    reference = TypedField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "class": "mono"}),
        label="Reference solution (optional)",
        help_text="A program that passes every test: each save runs it on them in the sandbox first and "
        "saves nothing if it fails one, so a mistyped test is caught before anyone runs on it. Only you "
        "and staff see it; the model never does.",
    )

    class Meta:
        model = Problem
        fields = ["title", "statement", "kind", "entry_point", "float_tolerance", "is_public", "reference"]
        labels = {"is_public": "Public"}

    def clean_reference(self) -> str:
        code: str = self.cleaned_data.get("reference", "")
        for _, message in code_errors(code, "reference"):
            raise forms.ValidationError(message)
        return code


class TestCaseForm(forms.ModelForm):
    # Whitespace is data here (a trailing newline on stdout): never strip it.
    input = TypedField(required=False)
    output = TypedField(required=False)

    class Meta:
        model = TestCase
        fields = ["input", "output", "public"]


TestCaseFormSet = forms.inlineformset_factory(
    Problem, TestCase, form=TestCaseForm, extra=2, can_delete=True, max_num=500
)


class ImportForm(forms.Form):
    FORMAT_CHOICES = [
        ("execsim", "ExecSim problem JSON (the CLI's format)"),
        ("cruxeval", "CRUXEval (JSONL)"),
        ("mbpp", "MBPP sanitized (JSONL)"),
        ("codejam", "Code Jam archive (JSONL)"),
    ]
    assert {c for c, _ in FORMAT_CHOICES} == set(FORMATS)
    file = forms.FileField(help_text="A JSON object, a JSON list of objects, or JSON Lines")
    format = forms.ChoiceField(choices=FORMAT_CHOICES, initial="execsim")
    is_public = forms.BooleanField(required=False, initial=True, label="Public")
    skip_bad = forms.BooleanField(
        required=False,
        label="Skip the records that cannot be imported",
        help_text="Off: one bad record and nothing is imported. On: the others are, and the page lists "
        "the ones skipped and why",
    )

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > settings.EXECSIM_MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size} bytes; the limit is {settings.EXECSIM_MAX_UPLOAD_BYTES}."
            )
        return upload
