"""The "Simulate my code" form: a program and its input (stdin text or a call expression)."""

from __future__ import annotations

from typing import Any

from django import forms

from webapp.limits import code_errors


class SimulateForm(forms.Form):
    MODES = [
        ("stdin", "stdin (the input is fed on standard input)"),
        ("call", "call (the input is an expression)"),
    ]
    code = forms.CharField(strip=False, widget=forms.Textarea(attrs={"rows": 14, "class": "mono"}))
    mode = forms.ChoiceField(choices=MODES, initial="call")
    code_input = forms.CharField(
        required=False,
        strip=False,
        label="Input",
        widget=forms.Textarea(attrs={"rows": 3, "class": "mono"}),
        help_text="stdin text, or for call mode an expression such as f(3, 'ab')",
    )
    model = forms.CharField(required=False, max_length=200)
    annotate = forms.BooleanField(
        required=False,
        label="Share with annotators",
        help_text="Put the simulation of this program in the shared annotation queue (off: only you see it)",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in ("code", "code_input"):
            for field, message in code_errors(data.get(name, ""), name):
                self.add_error(field, message)
        return data
