"""The explorer's paste form: a program, how its input is fed, and optionally a model's simulation."""

from __future__ import annotations

from typing import Any

from django import forms

from simulator.execution.program import call_errors
from webapp.limits import code_errors
from webapp.text import TypedField


class ExploreForm(forms.Form):
    title = forms.CharField(required=False, max_length=200)
    code = TypedField(
        widget=forms.Textarea(attrs={"rows": 14, "class": "mono"}),
        help_text="End a line with # break to make it a breakpoint (Forward and Back jump to it); "
        "a # hide: a, b comment leaves those names out of the frames",
    )
    mode = forms.ChoiceField(choices=[("call", "call"), ("stdin", "stdin")], initial="call")
    call_input = TypedField(
        required=False,
        label="Call or stdin",
        help_text="call mode: an expression such as f([3, 1, 2]) (blank: the program runs as a script); "
        "stdin mode: the text fed on stdin",
    )
    model_text = TypedField(
        required=False,
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
            data["call_input"] = (data.get("call_input") or "").strip()
            if data["call_input"]:
                for message in call_errors(data["call_input"]):
                    self.add_error("call_input", message)
            else:  # a script pasted as it is: run it so, as Python Tutor does
                data["mode"] = "stdin"
        return data
