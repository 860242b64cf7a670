"""Forms for problems: the problem itself, its tests (a formset), importing a file, and solving."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.validators import MaxValueValidator

from simulator.benchmarks import FORMATS
from simulator.pipeline.settings import Settings as PipelineSettings
from webapp.problems.models import Problem, TestCase


class ProblemForm(forms.ModelForm):
    class Meta:
        model = Problem
        fields = ["title", "statement", "kind", "entry_point", "float_tolerance", "is_public"]
        widgets = {"statement": forms.Textarea(attrs={"rows": 12})}
        labels = {"is_public": "Public"}


class TestCaseForm(forms.ModelForm):
    # Whitespace is data here (a trailing newline on stdout): never strip it.
    input = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 3, "class": "mono"})
    )
    output = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 3, "class": "mono"})
    )

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

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > settings.EXECSIM_MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size} bytes; the limit is {settings.EXECSIM_MAX_UPLOAD_BYTES}."
            )
        return upload


# The measured effect of repair with the default model, shown beside the field (docs/results.md).
REPAIR_HELP = (
    "Off by default: repair lowers the dev score today. Self-RLEF on 20 MBPP dev problems, 1 turn: "
    "the first program passed its public test in 15% of problems, the repaired one in 0% "
    "(3 broken, 0 fixed; docs/results.md, Issue 12)."
)


class SolveForm(forms.Form):
    k = forms.IntegerField(min_value=1, initial=4, label="Candidates (k)")
    turns = forms.IntegerField(
        min_value=0, initial=PipelineSettings.turns, label="Repair turns", help_text=REPAIR_HELP
    )
    sims = forms.IntegerField(min_value=1, initial=1, label="Simulations per test")
    model = forms.CharField(
        required=False, max_length=200, help_text="Model or checkpoint (blank: the default)"
    )
    temperature = forms.FloatField(min_value=0.0, max_value=2.0, initial=0.8)
    # max_value: the seed is stored in a 64-bit integer column (Run.seed)
    seed = forms.IntegerField(
        required=False, min_value=0, max_value=2**63 - 1, help_text="Blank: a random seed (recorded)"
    )
    real = forms.BooleanField(required=False, label="Also run for real (sandbox, public and private tests)")
    annotate = forms.BooleanField(
        required=False,
        label="Share with annotators",
        help_text="Put this run's simulations in the shared annotation queue (a public problem's always are)",
    )
    max_tokens = forms.IntegerField(
        required=False,
        min_value=16,
        max_value=32768,
        label="Max tokens per reply",
        help_text="Blank: the pipeline's default (512); smaller is faster on a CPU model server",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, limit in (
            ("k", settings.EXECSIM_MAX_K),
            ("turns", settings.EXECSIM_MAX_TURNS),
            ("sims", settings.EXECSIM_MAX_SIMS),
        ):
            self.fields[name].validators.append(MaxValueValidator(limit))
            self.fields[name].widget.attrs["max"] = limit

    def settings_dict(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["model"] = data.get("model") or ""
        if data.get("max_tokens") is None:  # blank: keep the pipeline's default
            data.pop("max_tokens", None)
        return data
