"""A saved trace: the program, its input, the real trace (JSON) and optionally a model's simulation to
compare with its verification, behind an unguessable slug (the permalink and the embed link)."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models

from simulator.execution import Program
from simulator.execution.trace import Trace as CoreTrace

# A run's status as the Result box says it (the raw status stays beside it, for scripts and the curious).
STATUS_WORDS = {
    "ok": "finished normally",
    "wrong_answer": "stopped: an assert failed",
    "runtime_error": "stopped with an error",
    "syntax_error": "did not run: the code does not parse",
    "timeout": "was stopped at its time limit",
    "memory_limit": "was stopped: it used too much memory",
    "output_limit": "was stopped: it printed too much",
    "killed": "died (killed, or it exited without reporting)",
    "invalid_input": "did not run",
}


def _slug() -> str:
    return secrets.token_urlsafe(16)  # 128 bits: a permalink cannot be guessed


class Trace(models.Model):
    MODES = [("call", "call (the input is an expression such as f(3))"), ("stdin", "stdin (a script)")]

    slug = models.CharField(max_length=40, unique=True, default=_slug, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="traces"
    )
    title = models.CharField(max_length=200, blank=True)
    code = models.TextField()
    mode = models.CharField(max_length=8, choices=MODES, default="call")
    call_input = models.TextField(blank=True, help_text="The call expression, or the stdin text")
    status = models.CharField(max_length=20)
    result = models.JSONField(default=dict, blank=True)  # value, stdout, message, exception
    trace = models.JSONField(default=dict, blank=True)  # simulator.execution.trace.Trace.to_dict()
    max_steps = models.IntegerField()
    model_text = models.TextField(blank=True)  # a model's simulation (NLEX) shown beside the trace
    # simulator.nlex.verify.Verification.to_dict() of model_text against this trace, made when it was
    # saved: a page view never verifies again (issue 51: the permalink is public); {} without one
    verification = models.JSONField(default=dict, blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    run = models.ForeignKey("runs.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    candidate = models.IntegerField(null=True, blank=True)
    test = models.IntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title or "Untitled trace"

    def program(self) -> Program:
        if self.mode == "stdin":
            return Program(code=self.code, stdin=self.call_input)
        return Program(code=self.code, call=self.call_input)

    def core_trace(self) -> CoreTrace:
        return CoreTrace.from_dict(self.trace or {})

    @property
    def truncated(self) -> bool:
        return bool((self.trace or {}).get("truncated"))

    @property
    def step_count(self) -> int:
        return len((self.trace or {}).get("steps", []))

    @property
    def status_words(self) -> str:
        """The status in plain words: "stopped with an error" for ``runtime_error``."""
        return STATUS_WORDS.get(self.status, self.status)

    def result_summary(self) -> dict[str, Any]:
        return {"status": self.status, **(self.result or {})}
