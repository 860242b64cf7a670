"""The context the trace viewer template (templates/explorer/_viewer.html) renders from: the JSON the
script steps through, the step cap, and a model's simulation checked claim by claim.

A saved trace's simulation is verified once, when it is saved, and the verification is stored with it
(``verification_of``): the permalink and the embed are public, and a view must not cost a verification
(issue 51)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simulator.execution import Program
from simulator.execution.trace import Trace
from simulator.explore import explorer_payload, result_shown
from simulator.nlex.verify import SCHEMA_VERSION, Verification, verify
from webapp.marks import marked_html

if TYPE_CHECKING:
    from webapp.explorer.models import Trace as SavedTrace


def viewer_context(
    trace: Trace,
    program: Program,
    *,
    model_text: str = "",
    status: str | None = None,
    verification: Verification | None = None,
) -> dict[str, Any]:
    """``status`` is the real run's (a run cut short leaves the model's answer unverifiable).
    ``verification``: ``model_text``'s against ``trace``, when it is stored (a page should pass it, not
    verify a stored text again on each view); without it the text is verified here."""
    context: dict[str, Any] = {
        "payload": explorer_payload(trace, program),
        "result_shown": result_shown(trace),  # an instance as the narration tells it, not its address
        "steps": len(trace.steps),
        "last_step": max(len(trace.steps) - 1, 0),
        "truncated": trace.truncated,
        "max_steps": trace.max_steps,
        "tracer_error": trace.error,
        "model_text": model_text,
    }
    if model_text and trace.steps:
        if verification is None:
            verification = verify(model_text, trace, program, status=status)
        context["verification"] = verification
        context["model_html"] = marked_html(model_text, verification.claims)
    return context


def verification_of(saved: SavedTrace, trace: Trace | None = None) -> Verification | None:
    """The verification of a saved trace's model text (None without one): the stored one; a trace
    saved before verifications were stored, or stored by another schema, is verified here once and
    keeps it. ``trace``: ``saved.core_trace()`` when the caller has it already."""
    core = saved.core_trace() if trace is None else trace
    if not saved.model_text or not core.steps:
        return None
    stored = saved.verification or {}
    if stored.get("schema_version") == SCHEMA_VERSION and stored.get("status"):
        return Verification.from_dict(stored)
    verification = verify(saved.model_text, core, saved.program(), status=saved.status)
    saved.verification = verification.to_dict()
    saved.save(update_fields=["verification"])
    return verification
