"""The explorer's paste form: a program, how its input is fed, and optionally a model's simulation."""

from __future__ import annotations

from typing import Any

from django import forms

from simulator.source import parse_python
from webapp.limits import code_errors


class ExploreForm(forms.Form):
    title = forms.CharField(required=False, max_length=200)
    code = forms.CharField(strip=False, widget=forms.Textarea(attrs={"rows": 14, "class": "mono"}))
    mode = forms.ChoiceField(choices=[("call", "call"), ("stdin", "stdin")], initial="call")
    call_input = forms.CharField(
        required=False,
        strip=False,
        label="Call or stdin",
        widget=forms.Textarea(attrs={"rows": 3, "class": "mono"}),
        help_text="call mode: an expression such as f([3, 1, 2]); stdin mode: the text fed on stdin",
    )
    model_text = forms.CharField(
        required=False,
        strip=False,
        label="A model's simulation (optional)",
        widget=forms.Textarea(attrs={"rows": 6, "class": "mono"}),
        help_text="An NLEX text to check claim by claim against the real trace",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in ("code", "call_input", "model_text"):
            for field, message in code_errors(data.get(name, ""), name):
                self.add_error(field, message)
        if data.get("mode") == "call":
            call = (data.get("call_input") or "").strip()
            if not call:
                self.add_error("call_input", "call mode needs an expression such as f(3)")
            else:
                try:
                    parse_python(call, mode="eval")
                except SyntaxError as exc:
                    self.add_error("call_input", f"not a Python expression: {exc.msg}")
                data["call_input"] = call
        return data
