"""The run forms: Solve (the pipeline's settings, its defaults the pipeline's own) and "Simulate my
code" (a program and its input: stdin text or a call expression)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.validators import MaxValueValidator

from simulator.execution.program import call_errors
from simulator.pipeline.settings import REPAIR_MODES, TIE_BREAKS, RunSettings
from webapp.limits import code_errors
from webapp.text import TypedField


class SimulateForm(forms.Form):
    MODES = [
        ("stdin", "stdin (the input is fed on standard input)"),
        ("call", "call (the input is an expression)"),
    ]
    code = TypedField(widget=forms.Textarea(attrs={"rows": 14, "class": "mono"}))
    mode = forms.ChoiceField(choices=MODES, initial="call")
    code_input = TypedField(
        required=False,
        label="Input",
        help_text="stdin text, or for call mode an expression such as f(3, 'ab')",
    )
    problem = forms.ModelChoiceField(
        queryset=None,  # set per user in __init__
        required=False,
        label="Against a problem",
        help_text="Optional: run and simulate the program on the problem's public tests and judge it on all "
        "of them (then Mode and Input are not used)",
    )
    model = forms.CharField(required=False, max_length=200)
    max_tokens = forms.IntegerField(
        required=False,
        min_value=16,
        max_value=32768,
        label="Max tokens per simulation",
        help_text=f"Blank: the pipeline's default ({RunSettings.max_tokens})",
    )
    annotate = forms.BooleanField(
        required=False,
        label="Share with annotators",
        help_text="Put the simulation of this program in the shared annotation queue (off: only you see it)",
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


# The measured effect of repair with the default model, shown beside the field (docs/results.md).
REPAIR_HELP = (
    "Off by default: repair is not shown to raise the score on hidden tests. Self-RLEF on the 162 "
    "MBPP dev problems, 1 turn, Guided, 4 replies a turn, temperature 0.8, today's default model, six "
    "runs with other seeds pooled: the public test went fail -> pass for 16 programs and pass -> fail "
    "for 13; the private tests, 12 against 5. The change in problems passing every private test, "
    "+0.7 points, has a 95% interval from -0.4 to +2.1 (docs/results.md, Issue 12, section 23)."
)


REPAIR_MODE_HELP = (
    "Guided: the simulation decides whether to repair; the model writes new programs, told which "
    "public tests the attempt got wrong; a fix is kept only if its simulation matches more public "
    "tests, and at a temperature above 0 a turn that kept none asks again at the next turn. Model: "
    "the paper's scaffold, the model decides (#SUBMIT or a fix)."
)
FIXES_HELP = (
    "Guided repair samples this many replies in one request (one at temperature 0); of the new "
    "programs not known to fail, the one whose simulations match the most public tests is the fix."
)
REPAIR_LABELS = {"guided": "Guided", "model": "Model (the paper's scaffold)"}


SIMS_HELP = (
    "One simulation is greedy, the model's likeliest run of the program; more are sampled at the "
    "temperature and vote (the most common output is the verdict)."
)


# The measured effect of each way of breaking a tie, shown beside the field (docs/results.md).
TIES_HELP = (
    "How Best@k picks among candidates whose simulations match as many public tests (most often "
    "none). A program known to fail without simulation (it never defines the function, surely "
    "raises, is hard-coded) is never picked while a tied one may pass, whatever is chosen here: "
    "+0.7 points over the paper's draw among them all (95% interval +0.1 to +1.5; eight fresh runs, "
    "docs/results.md, Issue 12, section 26). By agreement (the default): the program the model wrote "
    "most often among the k, nothing asked; on the 162 MBPP dev problems, k=4, it picked a program "
    "passing every test +0.4 points more often than ties at random (+0.1 to +0.8), a question asked "
    "before its runs (section 25); the default pick in all beats one of the k taken at random by +1.3 "
    "points (+0.4 to +2.3, section 26). At random, as in the paper. By likelihood: the candidate after "
    "which the model finds the expected outputs likeliest, read from one prompt per tied candidate "
    "and public test (median run 2.7 s -> 3.4 s here); not shown to help: +0.3 points over ties at "
    "random (-1.1 to +1.7) (section 24)."
)
TIE_LABELS = {
    "agreement": "By agreement (the program written most often)",
    "random": "At random",
    "likelihood": "By likelihood of the expected outputs",
}


# The measured effect of judging by simulation and by real runs, beside k and the oracle field
# (docs/results.md).
K_HELP = (
    "Best@k: of the k candidates, the one whose simulations match the most public tests, ties broken "
    "as below. With the default model, on the 162 MBPP dev problems, k=4, eight fresh runs of the "
    "app as it is, the default pick passed every test +1.3 points more often than one of the k "
    "taken at random (95% interval +0.4 to +2.3; a question asked before its runs), mostly from what "
    "is known without the model (programs known to fail, the program written most often): by the "
    "paper's rule, matches alone with ties at random, +0.2 (-0.2 to +0.7) (docs/results.md, Issue "
    "12, section 26)."
)
ORACLE_HELP = (
    "Off by default, so that the model judges its own code. On: each candidate is run on the public "
    "tests in the sandbox and picked (and repaired) by what really comes out, as a judge would; "
    "nothing is simulated. On the same eight runs this picked a program passing every test +4.9 "
    "points more often than a random pick (95% interval +3.0 to +7.0) (docs/results.md, section 26)."
)

# Above the Solve form of a problem that reads stdin (docs/results.md, sections 30, 34 and 36).
STDIN_NOTE = (
    "This problem's programs read standard input. The default model seldom writes one that can pass: "
    "of its 48 programs for the three example stdin problems, none both read the input and printed "
    "(a function never called, or the example's input written in), where the base model it was "
    "trained from wrote 18 and solved 4 (docs/results.md, section 34). Its predictions for such "
    "programs match the real output about 1 time in 20 (6%, against 24.5% for the same functions "
    "called directly) and repeat the input about half the time, so its pick of a candidate here can "
    'be little better than a draw; "Judge by running the public tests" (under More settings) picks '
    "by real outputs instead (section 30). The committed checkpoint smollm2-135m-nlex-stdin, trained "
    "for such problems, wrote 30 of its 48 programs for them that pass every test; start the app with "
    "EXECSIM_CHECKPOINT=smollm2-135m-nlex-stdin to use it (section 36)."
)


NARRATE_HELP = (
    "Off by default: the default model predicts outputs better when it answers at once, with a tenth "
    "of the tokens. CRUXEval-O dev (200 programs, greedy, the app's simulate request): 0.225 narrated, "
    "0.245 answered at once (docs/results.md, Issue 12, section 27). On: each simulation narrates the "
    "run (NLEX) before its answer, and a real run shows where the narration first went wrong."
)


class SolveForm(forms.Form):
    """The Solve form; its defaults are the pipeline's own (``simulator.pipeline.settings.Settings``).
    ``MAIN_FIELDS`` are shown; the others wait behind "More settings", each with its measured effect."""

    MAIN_FIELDS = ("k", "real")
    STDIN_NOTE = STDIN_NOTE

    k = forms.IntegerField(min_value=1, initial=RunSettings.k, label="Candidates (k)", help_text=K_HELP)
    oracle = forms.BooleanField(
        required=False,
        initial=RunSettings.oracle,
        label="Judge by running the public tests",
        help_text=ORACLE_HELP,
    )
    turns = forms.IntegerField(
        min_value=0, initial=RunSettings.turns, label="Repair turns", help_text=REPAIR_HELP
    )
    # not required: a form posted without it (a script, an older page) gets the pipeline's default
    repair = forms.ChoiceField(
        choices=[(mode, REPAIR_LABELS[mode]) for mode in REPAIR_MODES],
        required=False,
        initial=RunSettings.repair,
        label="Repair mode",
        help_text=REPAIR_MODE_HELP,
    )
    fixes = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=16,
        initial=RunSettings.fixes,
        label="Replies per repair turn",
        help_text=FIXES_HELP,
    )
    sims = forms.IntegerField(
        min_value=1, initial=RunSettings.sims, label="Simulations per test", help_text=SIMS_HELP
    )
    ties = forms.ChoiceField(
        choices=[(way, TIE_LABELS[way]) for way in TIE_BREAKS],
        required=False,
        initial=RunSettings.ties,
        label="Break ties",
        help_text=TIES_HELP,
    )
    narrate = forms.BooleanField(
        required=False,
        initial=RunSettings.narrate,
        label="Narrate each simulation (NLEX)",
        help_text=NARRATE_HELP,
    )
    model = forms.CharField(
        required=False, max_length=200, help_text="Model or checkpoint (blank: the default)"
    )
    temperature = forms.FloatField(min_value=0.0, max_value=2.0, initial=RunSettings.temperature)
    # max_value: the seed is stored in a 64-bit integer column (Run.seed)
    seed = forms.IntegerField(
        required=False, min_value=0, max_value=2**63 - 1, help_text="Blank: a random seed (recorded)"
    )
    real = forms.BooleanField(
        required=False,
        initial=True,  # a judge's verdict, and where each simulation first went wrong, without a second click
        label="Also run for real (sandbox, public and private tests)",
        help_text="On by default: each candidate also runs on the public tests, and the final program on "
        "every test, in the sandbox (a fraction of a second), so the page shows the verdict and where each "
        "simulation first went wrong; off, the Run for real button does it later",
    )
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
        help_text=f"Blank: the pipeline's default ({RunSettings.max_tokens}); smaller is faster on a "
        "CPU model server",
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
        data["repair"] = data.get("repair") or RunSettings.repair  # recorded: the mode the run used
        data["ties"] = data.get("ties") or RunSettings.ties
        if data.get("fixes") is None:
            data["fixes"] = RunSettings.fixes
        return data
