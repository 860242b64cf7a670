"""The run forms: Solve (the pipeline's settings, its defaults the pipeline's own) and "Simulate my
code" (a program and its input: stdin text or a call expression)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.validators import MaxValueValidator

from simulator.execution.program import call_errors
from simulator.pipeline.settings import RunSettings
from webapp.limits import code_errors
from webapp.text import TypedField


class SimulateForm(forms.Form):
    MODES = [
        ("stdin", "stdin (the input is fed on standard input)"),
        ("call", "call (the input is an expression)"),
    ]
    code = TypedField(
        widget=forms.Textarea(attrs={"rows": 14, "class": "mono"}),
        help_text="Your Python program: the model narrates how it runs, then it runs for real.",
    )
    mode = forms.ChoiceField(choices=MODES, initial="call", help_text="How the input reaches the program.")
    code_input = TypedField(
        required=False,
        label="Input",
        help_text="The text fed on standard input, or in call mode an expression such as f(3, 'ab').",
    )
    problem = forms.ModelChoiceField(
        queryset=None,  # set per user in __init__
        required=False,
        label="Against a problem",
        help_text="Optional: simulate the program on the problem's public tests and judge it on all of "
        "them (then Mode and Input are not used).",
    )
    model = forms.CharField(
        required=False, max_length=200, help_text="The model or checkpoint to ask; blank for the default."
    )
    max_tokens = forms.IntegerField(
        required=False,
        min_value=16,
        max_value=32768,
        label="Max tokens per simulation",
        help_text=f"The longest narration the model may write; blank for {RunSettings.max_tokens}.",
    )
    annotate = forms.BooleanField(
        required=False,
        label="Share with annotators",
        help_text="Put the simulation of this program in the shared annotation queue (off: only you see it).",
    )

    def __init__(self, *args: Any, user: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from webapp.problems.models import Problem

        self.fields["problem"].queryset = Problem.objects.visible_to(user).order_by("title")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in ("code", "code_input"):
            for field, message in code_errors(data.get(name, ""), name):
                self.add_error(field, message)
        if data.get("mode") == "call" and not data.get("problem"):
            for message in call_errors(data.get("code_input") or ""):
                self.add_error("code_input", message)
        return data


# Above the Solve form of a problem whose programs read standard input.
STDIN_NOTE = (
    "This problem's programs read standard input, which the small default model seldom writes a "
    'program to do; "Judge by running the public tests" (under More settings) picks by real outputs '
    "instead, and the checkpoint smollm2-135m-nlex-stdin writes such programs "
    "(docs/results.md#stdin-problems)."
)


class SolveForm(forms.Form):
    """The Solve form; its defaults are the pipeline's own (``simulator.pipeline.settings.RunSettings``).
    ``MAIN_FIELDS`` are shown; the others wait behind "More settings"."""

    MAIN_FIELDS = ("k", "narrate", "real")
    STDIN_NOTE = STDIN_NOTE

    k = forms.IntegerField(
        min_value=1,
        initial=RunSettings.k,
        label="Candidates (k)",
        help_text="How many programs the model writes; the one whose simulations match the most public "
        "tests is picked (docs/results.md#selection).",
    )
    narrate = forms.BooleanField(
        required=False,
        initial=RunSettings.narrate,
        label="Narrate each simulation (NLEX)",
        help_text="Watch the model narrate how each program runs, checked claim by claim against the real "
        "run; off, it states each output at once, which is quicker (docs/results.md#simulation).",
    )
    real = forms.BooleanField(
        required=False,
        initial=True,  # a judge's verdict, and where each simulation first went wrong, without a second click
        label="Also run for real (sandbox, public and private tests)",
        help_text="Run the programs in the sandbox too, to show the judge's verdict and where each "
        "simulation first went wrong; off, the Run for real button does it later.",
    )
    oracle = forms.BooleanField(
        required=False,
        initial=RunSettings.oracle,
        label="Judge by running the public tests",
        help_text="Pick and repair by what the programs really output instead of by their simulations, "
        "as a judge would (docs/results.md#selection).",
    )
    turns = forms.IntegerField(
        min_value=0,
        initial=RunSettings.turns,
        label="Repair turns",
        help_text="Let the model rewrite the picked program from its own simulated feedback; off by "
        "default, as it does not yet raise the score on hidden tests (docs/results.md#repair).",
    )
    model = forms.CharField(
        required=False, max_length=200, help_text="The model or checkpoint to ask; blank for the default."
    )
    temperature = forms.FloatField(
        min_value=0.0,
        max_value=2.0,
        initial=RunSettings.temperature,
        help_text="How varied the candidates are: 0 writes the same program k times.",
    )
    # max_value: the seed is stored in a 64-bit integer column (Run.seed)
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=2**63 - 1,
        help_text="Blank draws one (recorded), so a run can be repeated.",
    )
    annotate = forms.BooleanField(
        required=False,
        label="Share with annotators",
        help_text="Put this run's simulations in the shared annotation queue (a public problem's always "
        "are).",
    )
    max_tokens = forms.IntegerField(
        required=False,
        min_value=16,
        max_value=32768,
        label="Max tokens per reply",
        help_text=f"The longest reply the model may write; blank for {RunSettings.max_tokens}, smaller is "
        "faster on a CPU.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, limit in (("k", settings.EXECSIM_MAX_K), ("turns", settings.EXECSIM_MAX_TURNS)):
            self.fields[name].validators.append(MaxValueValidator(limit))
            self.fields[name].widget.attrs["max"] = limit

    def settings_dict(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["model"] = data.get("model") or ""
        if data.get("max_tokens") is None:  # blank: keep the pipeline's default
            data.pop("max_tokens", None)
        return data
