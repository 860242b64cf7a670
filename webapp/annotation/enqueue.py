"""Turning a run's simulations into queue items: each simulation is checked against the real trace of
the program it simulated (run here, in the sandbox), so the queue can offer "only divergent ones"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simulator.nlex.verify import verify_result
from webapp.annotation.models import AnnotationItem
from webapp.explorer.conf import annotations_per_item, explorer_max_steps
from webapp.explorer.programs import traced


@dataclass
class EnqueueReport:
    created: int = 0
    skipped: list[str] = field(default_factory=list)


def model_of(run: Any) -> str:
    """The model (or checkpoint) that wrote the run's simulations, as the run recorded it."""
    return str(run.provenance.get("model") or run.settings.get("model") or "unknown")


def enqueue_run(run: Any, *, required: int | None = None) -> EnqueueReport:
    """One item per finished simulation of ``run`` that has none yet."""
    report = EnqueueReport()
    required = required or annotations_per_item()
    simulations = run.simulations.filter(done=True).exclude(text="").filter(annotation_item__isnull=True)
    for sim in simulations:
        label = f"candidate {sim.candidate} test {sim.test} turn {sim.turn} sample {sim.sample}"
        try:
            program = run.program_of(sim.candidate, sim.test, sim.turn)
        except LookupError as exc:
            report.skipped.append(f"{label}: {exc}")
            continue
        result = traced(program, explorer_max_steps())
        if result.trace is None or not result.trace.steps:
            report.skipped.append(f"{label}: no trace ({result.status}: {result.message})")
            continue
        check = verify_result(sim.text, result, program)
        AnnotationItem.objects.create(
            simulation=sim,
            run=run,
            problem=run.problem,
            model=model_of(run),
            code=program.code,
            call=program.call,
            stdin=program.stdin,
            text=sim.text,
            trace=result.trace.to_dict(),
            exec_status=result.status,
            original_check=check.to_dict(),
            divergent=check.divergent,
            required=required,
        )
        report.created += 1
    return report
