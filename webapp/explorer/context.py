"""The context the trace viewer template (templates/explorer/_viewer.html) renders from: the JSON the
script steps through, the step cap, and a model's simulation checked claim by claim."""

from __future__ import annotations

from typing import Any

from simulator.execution import Program
from simulator.execution.trace import Trace
from simulator.explore import explorer_payload
from simulator.nlex.verify import verify
from webapp.marks import marked_html


def viewer_context(
    trace: Trace, program: Program, *, model_text: str = "", status: str | None = None
) -> dict[str, Any]:
    """``status`` is the real run's (a run cut short leaves the model's answer unverifiable)."""
    context: dict[str, Any] = {
        "payload": explorer_payload(trace, program),
        "steps": len(trace.steps),
        "last_step": max(len(trace.steps) - 1, 0),
        "truncated": trace.truncated,
        "max_steps": trace.max_steps,
        "tracer_error": trace.error,
        "model_text": model_text,
    }
    if model_text and trace.steps:
        verification = verify(model_text, trace, program, status=status)
        context["verification"] = verification
        context["model_html"] = marked_html(model_text, verification.claims)
    return context
