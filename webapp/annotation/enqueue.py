"""Turning a run's simulations into queue items: each simulation is checked against the real trace of
the program it simulated (run here, in the sandbox), so the queue can offer "only divergent ones". A
simulation whose task is queued already (``AnnotationItem.key_of``) becomes a duplicate of that item,
with its trace and check, and is never served."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from simulator.nlex.verify import verify_result
from webapp.annotation.models import AnnotationItem
from webapp.annotation.queue import policy_defaults
from webapp.explorer.programs import traced

SHARED = ("trace", "exec_status", "original_check", "divergent")  # what a duplicate copies from its original


@dataclass
class EnqueueReport:
    created: int = 0  # items to annotate
    duplicates: int = 0  # items set aside: the same task as an item already queued
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """``2 added, 6 duplicates set aside, 0 skipped``: what the queue page and the command say."""
        return f"{self.created} added, {self.duplicates} duplicates set aside, {len(self.skipped)} skipped"


def model_of(run: Any) -> str:
    """The model (or checkpoint) that wrote the run's simulations, as the run recorded it."""
    return str(run.provenance.get("model") or run.settings.get("model") or "unknown")


def enqueue_run(run: Any, *, required: int | None = None) -> EnqueueReport:
    """One item per finished simulation of ``run`` that has none yet, with its queue's overlap and
    claim timeout (``QueuePolicy``; ``required`` overrides the overlap)."""
    report = EnqueueReport()
    model = model_of(run)
    default_required, claim_seconds = policy_defaults(model)
    required = required or default_required
    simulations = run.simulations.filter(done=True).exclude(text="").filter(annotation_item__isnull=True)
    for sim in simulations:
        label = f"candidate {sim.candidate} test {sim.test} turn {sim.turn} sample {sim.sample}"
        try:
            program = run.program_of(sim.candidate, sim.test, sim.turn)
        except LookupError as exc:
            report.skipped.append(f"{label}: {exc}")
            continue
        key = AnnotationItem.key_of(model, program, sim.text)
        original = AnnotationItem.objects.filter(task_key=key, duplicate_of=None).order_by("id").first()
        if original is not None:  # the same trace and check, never served
            fields = {name: getattr(original, name) for name in SHARED}
            fields.update(status=AnnotationItem.DUPLICATE, duplicate_of=original)
        else:
            result = traced(program, settings.EXECSIM_EXPLORER_MAX_STEPS)
            if result.trace is None or not result.trace.steps:
                report.skipped.append(f"{label}: no trace ({result.status}: {result.message})")
                continue
            check = verify_result(sim.text, result, program)
            fields = {
                "trace": result.trace.to_dict(),
                "exec_status": result.status,
                "original_check": check.to_dict(),
                "divergent": check.divergent,
                "required": required,
                "claim_seconds": claim_seconds,
            }
        AnnotationItem.objects.create(
            simulation=sim,
            run=run,
            problem=run.problem,
            model=model,
            code=program.code,
            call=program.call,
            stdin=program.stdin,
            text=sim.text,
            task_key=key,
            **fields,
        )
        if original is None:
            report.created += 1
        else:
            report.duplicates += 1
    return report


def runs_to_add(limit: int = 50) -> list[Any]:
    """Finished runs, newest first, shared for annotation (``privacy.shared_for_annotation``) whose
    finished simulations are not all queued yet: what staff pick from on the queue page."""
    from webapp.runs.models import Run
    from webapp.runs.privacy import shared_for_annotation

    runs = (
        Run.objects.filter(
            status=Run.FINISHED, simulations__done=True, simulations__annotation_item__isnull=True
        )
        .select_related("problem")
        .distinct()
        .order_by("-created_at")
    )
    return [run for run in runs[: limit * 4] if shared_for_annotation(run)][:limit]
